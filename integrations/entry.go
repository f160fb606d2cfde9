package integrations

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/postern-mcp/postern/internal/termsafe"
)

// Entry is what a host runs to start postern, or, for a URL entry, where it reaches a running
// postern mcp --http and the bearer token it sends.
type Entry struct {
	Command string
	Args    []string
	URL     string // a URL entry: no Command
	Token   string // the URL entry's Authorization: Bearer token
}

// Equal reports whether two entries run (or reach) the same thing.
func (e Entry) Equal(o Entry) bool {
	return e.Command == o.Command && slices.Equal(e.Args, o.Args) && e.URL == o.URL && e.Token == o.Token
}

// String is the entry as a shell would run it, or a URL entry's URL and header, the token masked.
func (e Entry) String() string {
	if e.URL != "" {
		return e.URL + " with Authorization: Bearer " + Mask
	}
	return shellJoin(append([]string{e.Command}, e.Args...))
}

// Options are the choices a person makes for a registration.
type Options struct {
	Name     string   // the server's name in the host (default postern)
	Scope    string   // user or project
	Scopes   string   // --scopes for postern mcp; "" passes none
	Accounts []string // --account for postern mcp
	Config   string   // postern's configuration file, absolute
	Binary   string   // postern to run, absolute
	// HTTP is the URL of a postern mcp --http to register instead of a program ("" for none).
	HTTP string
	// Token is the HTTP bearer token: written into a URL entry, and masked in everything
	// shown whenever it is set (other entries of a file may hold it too). TokenFile is where it
	// is kept, for the commands shown and doctor's sentences.
	Token, TokenFile string
}

// Want is the entry these options ask for: postern mcp with absolute paths
// and the chosen flags, in a fixed order.
func (o *Options) Want() Entry {
	if o.HTTP != "" {
		return Entry{URL: o.HTTP, Token: o.Token}
	}
	args := []string{"mcp", "--config", o.Config}
	if o.Scopes != "" {
		args = append(args, "--scopes", o.Scopes)
	}
	for _, a := range o.Accounts {
		args = append(args, "--account", a)
	}
	return Entry{Command: o.Binary, Args: args}
}

// entryValue is the JSON an entry takes in a host's file, by shape, with its
// keys in the order people write them.
func entryValue(shape string, e Entry) any {
	if u, ok := strings.CutPrefix(shape, "url:"); ok {
		return urlValue(u, e)
	}
	args := e.Args
	if args == nil {
		args = []string{}
	}
	switch shape {
	case "stdio":
		return struct {
			Type    string   `json:"type"`
			Command string   `json:"command"`
			Args    []string `json:"args"`
		}{"stdio", e.Command, args}
	case "opencode":
		return struct {
			Type    string   `json:"type"`
			Command []string `json:"command"`
			Enabled bool     `json:"enabled"`
		}{"local", append([]string{e.Command}, args...), true}
	case "copilot":
		return struct {
			Type    string   `json:"type"`
			Command string   `json:"command"`
			Args    []string `json:"args"`
			Tools   []string `json:"tools"`
		}{"local", e.Command, args, []string{"*"}}
	default: // command-args, and codex's table has the same two keys
		return struct {
			Command string   `json:"command"`
			Args    []string `json:"args"`
		}{e.Command, args}
	}
}

// entryJSON is entryValue, indented for a file.
func entryJSON(shape string, e Entry) []byte {
	b, _ := json.MarshalIndent(entryValue(shape, e), "", "  ")
	return b
}

// parseEntry reads an entry of shape back from its JSON.
func parseEntry(shape string, raw []byte) (Entry, error) {
	if e, ok := parseURLEntry(raw); ok {
		return e, nil
	}
	var v struct {
		Command json.RawMessage `json:"command"`
		Args    []string        `json:"args"`
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return Entry{}, fmt.Errorf("the entry is not an object with command and args: %v", err)
	}
	var list []string
	if json.Unmarshal(v.Command, &list) == nil && len(list) > 0 {
		return Entry{Command: list[0], Args: append(list[1:], v.Args...)}, nil
	}
	var cmd string
	if err := json.Unmarshal(v.Command, &cmd); err != nil || cmd == "" {
		return Entry{}, errors.New("the entry has no command")
	}
	return Entry{Command: cmd, Args: v.Args}, nil
}

// Binary finds the postern to register: the running program, by a path that
// survives an upgrade. A package manager's versioned folder (Homebrew's
// Cellar/postern/1.2.3/bin/postern) is replaced by the stable link to it that
// is on PATH or in the manager's opt folder, when that link leads to the same
// file. A program that go run or go test built in a temporary folder is
// refused: a host could not start it tomorrow.
func Binary(lookPath func(string) (string, error)) (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("cannot tell where this postern is (%v); pass --binary PATH", err)
	}
	return stableBinary(exe, lookPath)
}

func stableBinary(exe string, lookPath func(string) (string, error)) (string, error) {
	exe, err := filepath.Abs(exe)
	if err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(exe)
	if err != nil {
		real = exe
	}
	same := func(p string) bool {
		r, err := filepath.EvalSymlinks(p)
		return err == nil && r == real
	}
	// A link on PATH to this very file is what the person installed.
	if lookPath != nil {
		if p, err := lookPath(filepath.Base(exe)); err == nil {
			if abs, err := filepath.Abs(p); err == nil && same(abs) {
				return abs, nil
			}
		}
	}
	// Homebrew: PREFIX/Cellar/NAME/VERSION/bin/x → PREFIX/opt/NAME/bin/x.
	if i := strings.Index(real, string(filepath.Separator)+"Cellar"+string(filepath.Separator)); i >= 0 {
		rest := strings.Split(real[i+len("/Cellar/"):], string(filepath.Separator))
		if len(rest) >= 3 {
			opt := filepath.Join(append([]string{real[:i], "opt", rest[0]}, rest[2:]...)...)
			if same(opt) {
				return opt, nil
			}
		}
	}
	tmp := os.TempDir()
	if strings.HasPrefix(real, filepath.Join(tmp, "go-build")) || strings.Contains(real, string(filepath.Separator)+"go-build") {
		return "", fmt.Errorf("this postern (%s) was built by go run or go test in a temporary folder, which a host could not start later; install it (go install ./cmd/postern) and run that one, or pass --binary PATH", real)
	}
	return exe, nil
}

// lookPath is exec.LookPath, absolute.
func lookPath(name string) (string, error) {
	p, err := exec.LookPath(name)
	if err != nil {
		return "", err
	}
	return filepath.Abs(p)
}

// shellJoin quotes words for a POSIX shell, only where needed. It is only ever shown to a
// person (the commands run are argv), so a word holding a character a terminal would act on
// or hide is written in bash's $'…' quoting with termsafe's escapes: safe to print, and the
// same word when pasted into zsh or bash (4.2 or later).
func shellJoin(words []string) string {
	out := make([]string, len(words))
	for i, w := range words {
		out[i] = shellQuote(w)
	}
	return strings.Join(out, " ")
}

func shellQuote(w string) string {
	if w == "" {
		return "''"
	}
	plain := true
	for _, c := range w {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("-_./:,=@%+", c)) {
			plain = false
			break
		}
	}
	if plain {
		return w
	}
	if !utf8.ValidString(w) || strings.IndexFunc(w, func(c rune) bool { return c != '\\' && termsafe.Unsafe(c) }) >= 0 {
		return "$'" + strings.ReplaceAll(termsafe.Line(w), "'", `\'`) + "'"
	}
	return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
}
