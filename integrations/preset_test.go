package integrations

import (
	"bufio"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/postern-mcp/postern/generated"
)

// A mistyped preset is a usage error that names the nearest preset and every one.
func TestLookupPreset(t *testing.T) {
	p, err := LookupPreset(generated.DefaultPreset)
	if err != nil || p.Name != generated.DefaultPreset {
		t.Fatalf("LookupPreset(%q) = %v, %v", generated.DefaultPreset, p, err)
	}
	typo := generated.DefaultPreset[:len(generated.DefaultPreset)-1] + "x"
	_, err = LookupPreset(typo)
	var ue *UsageError
	if !errors.As(err, &ue) || !strings.Contains(ue.Msg, "did you mean "+generated.DefaultPreset) {
		t.Fatalf("LookupPreset(%q) = %v, want a usage error suggesting %s", typo, err, generated.DefaultPreset)
	}
	for _, q := range generated.Presets {
		if !strings.Contains(ue.Msg, q.Name) {
			t.Errorf("the error does not list preset %s: %s", q.Name, ue.Msg)
		}
	}
}

// A preset gives its scopes, a scope list is taken as given, a wrong scope is a usage error and
// neither leaves the options alone.
func TestSetGrant(t *testing.T) {
	p := generated.Presets[0]
	o := &Options{}
	name, err := SetGrant(o, p.Name, "")
	if err != nil || name != p.Name || o.Scopes != strings.Join(p.Scopes, ",") {
		t.Fatalf("preset: %q %q %v", name, o.Scopes, err)
	}
	o = &Options{}
	if name, err := SetGrant(o, "", generated.ScopeRead); err != nil || name != "" || o.Scopes != generated.ScopeRead {
		t.Fatalf("scopes: %q %q %v", name, o.Scopes, err)
	}
	o = &Options{Scopes: "kept"}
	var ue *UsageError
	if _, err := SetGrant(o, "", "no-such-scope"); !errors.As(err, &ue) || !strings.HasPrefix(ue.Msg, "--scopes: ") || o.Scopes != "kept" {
		t.Fatalf("a wrong scope: %v, scopes %q", err, o.Scopes)
	}
	if _, err := SetGrant(o, "", ""); err != nil || o.Scopes != "kept" {
		t.Fatalf("neither: %v, scopes %q", err, o.Scopes)
	}
}

// The question takes a number, a name or the default; wrong answers are said and asked again,
// and no answer changes nothing.
func TestAskPreset(t *testing.T) {
	last := generated.Presets[len(generated.Presets)-1]
	ask := func(input string) (string, string, error) {
		var out strings.Builder
		p, err := AskPreset(bufio.NewReader(strings.NewReader(input)), &out, generated.DefaultPreset)
		if p == nil {
			return "", out.String(), err
		}
		return p.Name, out.String(), err
	}
	if got, out, err := ask("\n"); err != nil || got != generated.DefaultPreset || !strings.Contains(out, generated.DefaultPreset+" (default)") {
		t.Fatalf("empty answer: %q %v\n%s", got, err, out)
	}
	if got, _, err := ask(strings.Repeat("x", 1) + "\n" + last.Name + "\n"); err != nil || got != last.Name {
		t.Fatalf("a wrong then a right name: %q %v", got, err)
	}
	if got, _, err := ask("1\n"); err != nil || got != generated.Presets[0].Name {
		t.Fatalf("number 1: %q %v", got, err)
	}
	if _, out, err := ask("0\n99\nnope\n"); err == nil || !strings.Contains(err.Error(), "nothing was changed") || strings.Count(out, "there is no preset") != 3 {
		t.Fatalf("three wrong answers: %v\n%s", err, out)
	}
	if _, _, err := ask(""); err == nil || !strings.Contains(err.Error(), "no answer") {
		t.Fatalf("no answer: %v", err)
	}
}

// Repair offers the recorded preset first; without one, the default.
func TestRecordedPreset(t *testing.T) {
	if got := RecordedPreset(nil, "d"); got != "d" {
		t.Fatalf("no targets: %q", got)
	}
	ts := []Target{{}, {Record: &Record{}}, {Record: &Record{Preset: "p"}}}
	if got := RecordedPreset(ts, "d"); got != "p" {
		t.Fatalf("a recorded preset: %q", got)
	}
}

// Only a file with an execute bit is a binary to keep.
func TestExecutable(t *testing.T) {
	dir := t.TempDir()
	run, plain := filepath.Join(dir, "run"), filepath.Join(dir, "plain")
	os.WriteFile(run, []byte("#!/bin/sh\n"), 0o755)
	os.WriteFile(plain, []byte("x"), 0o644)
	for p, want := range map[string]bool{run: true, plain: false, dir: false, "": false, filepath.Join(dir, "gone"): false} {
		if Executable(p) != want {
			t.Errorf("Executable(%q) = %v", p, !want)
		}
	}
}

// The token is read when there is one, made only when asked, and never made otherwise.
func TestToken(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	o := &Options{}
	if made, err := Token(o, false); err != nil || made || o.Token != "" || o.TokenFile == "" {
		t.Fatalf("no token, not making: made %v, %q, %v", made, o.Token, err)
	}
	if _, err := os.Stat(o.TokenFile); err == nil {
		t.Fatal("a token file was made without being asked")
	}
	if made, err := Token(o, true); err != nil || !made || o.Token == "" {
		t.Fatalf("making: made %v, %v", made, err)
	}
	o2 := &Options{}
	if made, err := Token(o2, false); err != nil || made || o2.Token != o.Token {
		t.Fatalf("reading it back: made %v, %q != %q, %v", made, o2.Token, o.Token, err)
	}
}

// A mistyped host is a usage error naming the nearest and every host.
func TestLookupHosts(t *testing.T) {
	hs, err := LookupHosts([]string{"cursor", "codex"})
	if err != nil || len(hs) != 2 || hs[0].ID != "cursor" || hs[1].ID != "codex" {
		t.Fatalf("known hosts: %v %v", hs, err)
	}
	_, err = LookupHosts([]string{"cursor", "curser"})
	var ue *UsageError
	if !errors.As(err, &ue) || !strings.Contains(ue.Msg, "did you mean cursor?") || !strings.Contains(ue.Msg, strings.Join(IDs(), ", ")) {
		t.Fatalf("a typo: %v", err)
	}
}

// Setup again says when it changes the grant recorded, and says nothing when it does not.
func TestGrantChanges(t *testing.T) {
	e := testEnv(t)
	h := mustHost(t, "cursor")
	o := testOptions(e, "/bin/postern")
	o.Scopes = generated.ScopeRead
	rec := NewRecord(h, o, "", e.Project, time.Now())
	targets := []Target{{Host: h, Options: o, Record: &rec}}
	if got := GrantChanges(h, o, "", e.Project, targets, time.Now()); len(got) != 0 {
		t.Fatalf("the same grant: %v", got)
	}
	p := generated.Presets[0]
	o2 := testOptions(e, "/bin/postern")
	o2.Scopes = strings.Join(p.Scopes, ",")
	got := GrantChanges(h, o2, p.Name, e.Project, targets, time.Now())
	if len(got) != 1 || !strings.Contains(got[0], "cursor: this changes the grant setup recorded") || !strings.Contains(got[0], "preset "+p.Name) {
		t.Fatalf("another grant: %v", got)
	}
	other := testOptions(e, "/bin/postern")
	other.Name = "elsewhere"
	if got := GrantChanges(h, other, p.Name, e.Project, targets, time.Now()); len(got) != 0 {
		t.Fatalf("another registration's record: %v", got)
	}
}
