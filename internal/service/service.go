// Package service writes and removes the service that runs postern watch at login: a systemd
// user unit (Linux) or a launchd agent (macOS), rendered from the templates below, and a
// record beside the configuration (service.json) of what was written and which folders were
// made for it, so that removing deletes exactly that and leaves the home as it was. It never
// writes over a file it did not write, nor deletes one changed since.
package service

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/template"
	"time"

	"github.com/postern-mcp/postern/internal/atomicfile"
)

// Unit is the systemd unit's name; Label, the launchd agent's.
const (
	Unit  = "postern-watch.service"
	Label = "io.github.postern-mcp.watch"
)

var systemdTemplate = template.Must(template.New("unit").Funcs(template.FuncMap{"arg": systemdArg}).Parse(`# Written by postern service install; postern service remove deletes it.
[Unit]
Description=postern: keep the local mail store synced (postern watch)
Documentation=https://github.com/postern-mcp/postern

[Service]
Type=simple
ExecStart={{arg .Binary}} watch --config {{arg .Config}}
Restart=on-failure
RestartSec=30

[Install]
WantedBy=default.target
`))

var launchdTemplate = template.Must(template.New("plist").Funcs(template.FuncMap{"xml": xmlText}).Parse(`<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<!-- Written by postern service install; postern service remove deletes it. -->
<plist version="1.0">
<dict>
	<key>Label</key>
	<string>{{xml .Label}}</string>
	<key>ProgramArguments</key>
	<array>
		<string>{{xml .Binary}}</string>
		<string>watch</string>
		<string>--config</string>
		<string>{{xml .Config}}</string>
	</array>
	<key>RunAtLoad</key>
	<true/>
	<key>KeepAlive</key>
	<dict>
		<key>SuccessfulExit</key>
		<false/>
	</dict>
	<key>StandardErrorPath</key>
	<string>{{xml .Log}}</string>
</dict>
</plist>
`))

// systemdArg quotes one word of ExecStart (systemd.service "Command lines"): in double
// quotes, with \ and " escaped, % doubled (a specifier) and $ doubled (a variable).
func systemdArg(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "%", "%%", "$", "$$")
	return `"` + r.Replace(s) + `"`
}

func xmlText(s string) string {
	var b bytes.Buffer
	xml.EscapeText(&b, []byte(s))
	return b.String()
}

// File is the file install writes for goos under home: its path and its text.
func File(goos, home, binary, cfgPath string) (string, []byte, error) {
	data := struct{ Binary, Config, Label, Log string }{binary, cfgPath, Label, filepath.Join(home, "Library", "Logs", "postern-watch.log")}
	var b bytes.Buffer
	var path string
	switch goos {
	case "linux":
		path = filepath.Join(home, ".config", "systemd", "user", Unit)
		if err := systemdTemplate.Execute(&b, data); err != nil {
			return "", nil, err
		}
	case "darwin":
		path = filepath.Join(home, "Library", "LaunchAgents", Label+".plist")
		if err := launchdTemplate.Execute(&b, data); err != nil {
			return "", nil, err
		}
	default:
		return "", nil, fmt.Errorf("postern service knows systemd (Linux) and launchd (macOS), not %s; run postern watch from your system's own start-up mechanism", goos)
	}
	if strings.ContainsAny(binary+cfgPath, "\n\r") {
		return "", nil, errors.New("the path of postern or of the configuration holds a line break, which a service file cannot; move it")
	}
	return path, b.Bytes(), nil
}

// record is what install wrote, kept for remove.
type record struct {
	File   string    `json:"file"`
	SHA256 string    `json:"sha256"`
	Made   []string  `json:"made,omitempty"` // folders made for it and for this record
	At     time.Time `json:"at"`
}

// RecordPath is the record of what install wrote for the configuration at cfgPath.
func RecordPath(cfgPath string) string {
	return filepath.Join(filepath.Dir(cfgPath), "service.json")
}

// Install is a service file about to be written.
type Install struct {
	GOOS, Path, Config string
	Text               []byte
}

// Plan renders the file that runs binary watch --config cfgPath for goos under home, and
// refuses when a file is there already that install did not write.
func Plan(goos, home, binary, cfgPath string) (*Install, error) {
	path, text, err := File(goos, home, binary, cfgPath)
	if err != nil {
		return nil, err
	}
	if old, err := os.ReadFile(path); err == nil && !bytes.Equal(old, text) {
		if _, err := os.Stat(RecordPath(cfgPath)); err != nil {
			return nil, fmt.Errorf("%s exists and was not written by postern service install; move it away first", path)
		}
	}
	return &Install{GOOS: goos, Path: path, Config: cfgPath, Text: text}, nil
}

// Write writes the record, then the file, making the folders they need and recording those.
func (in *Install) Write() error {
	recPath := RecordPath(in.Config)
	made, err := mkdirsRecorded(filepath.Dir(in.Path))
	if err != nil {
		return err
	}
	recDirs, err := mkdirsRecorded(filepath.Dir(recPath))
	if err != nil {
		return err
	}
	sum := sha256.Sum256(in.Text)
	rec := record{File: in.Path, SHA256: hex.EncodeToString(sum[:]), Made: append(made, recDirs...), At: time.Now().UTC()}
	if prev, err := loadRecord(recPath); err == nil && prev.File == in.Path {
		rec.Made = prev.Made // the folders the first install made are still the ones to remove
	}
	rb, _ := json.MarshalIndent(rec, "", "  ")
	if err := atomicfile.Write(recPath, ".service-*.json", append(rb, '\n')); err != nil {
		return err
	}
	if err := atomicfile.Write(in.Path, ".postern-watch-*", in.Text); err != nil {
		return err
	}
	os.Chmod(in.Path, 0o644) // read by the service manager
	return nil
}

// Start are the commands that start the service at path.
func Start(goos, path string) []string {
	if goos == "darwin" {
		return []string{"launchctl load -w " + shellQuote(path)}
	}
	return []string{"systemctl --user daemon-reload", "systemctl --user enable --now " + Unit}
}

// Stop are the commands that stop it.
func Stop(goos, path string) []string {
	if goos == "darwin" {
		return []string{"launchctl unload -w " + shellQuote(path)}
	}
	return []string{"systemctl --user disable --now " + Unit, "systemctl --user daemon-reload"}
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// Words splits one of the commands of Start or Stop into its program and arguments: on
// spaces, a quoted path last as one word.
func Words(cmd string) []string {
	words := strings.Fields(cmd)
	for i, w := range words {
		if strings.HasPrefix(w, "'") {
			return append(words[:i], strings.Trim(strings.Join(words[i:], " "), "'"))
		}
	}
	return words
}

// mkdirsRecorded makes dir and its missing parents (0700), and returns those it made,
// deepest first.
func mkdirsRecorded(dir string) ([]string, error) {
	var missing []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil || d == filepath.Dir(d) {
			break
		}
		missing = append(missing, d)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("cannot create %s: %w", dir, err)
	}
	return missing, nil
}

func loadRecord(path string) (*record, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r record
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s cannot be read (%v); delete the service file yourself", path, err)
	}
	return &r, nil
}

// Installed is what install wrote for a configuration, as its record says.
type Installed struct {
	GOOS string
	// File is the service file; Present, whether it is still there (unchanged).
	File    string
	Present bool
	rec     *record
	recPath string
}

// Find reads what install wrote for the configuration at cfgPath, and refuses when its file
// was changed since.
func Find(cfgPath string) (*Installed, error) {
	recPath := RecordPath(cfgPath)
	rec, err := loadRecord(recPath)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("no service was installed for %s (there is no %s); nothing was removed", cfgPath, recPath)
	}
	if err != nil {
		return nil, err
	}
	in := &Installed{GOOS: "linux", File: rec.File, rec: rec, recPath: recPath}
	if strings.HasSuffix(rec.File, ".plist") {
		in.GOOS = "darwin"
	}
	b, err := os.ReadFile(rec.File)
	if errors.Is(err, fs.ErrNotExist) {
		return in, nil
	}
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(b)
	if hex.EncodeToString(sum[:]) != rec.SHA256 {
		return nil, fmt.Errorf("%s was changed since postern service install wrote it, so it is left alone; delete it yourself, then %s", rec.File, recPath)
	}
	in.Present = true
	return in, nil
}

// RemoveFile deletes the service file.
func (in *Installed) RemoveFile() error {
	if err := os.Remove(in.File); err != nil {
		return fmt.Errorf("cannot delete %s: %w", in.File, err)
	}
	return nil
}

// RemoveRecord deletes the record and the folders made for the file and the record, when
// they are empty.
func (in *Installed) RemoveRecord() error {
	if err := os.Remove(in.recPath); err != nil {
		return fmt.Errorf("cannot delete %s: %w", in.recPath, err)
	}
	// Deepest first: a folder made inside another made is emptied before it.
	made := in.rec.Made
	sort.Slice(made, func(i, j int) bool { return len(made[i]) > len(made[j]) })
	for _, d := range made {
		os.Remove(d) // only when empty: a folder that holds anything else stays
	}
	return nil
}
