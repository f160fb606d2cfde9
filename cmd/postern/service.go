package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"text/template"
	"time"

	"github.com/postern-mcp/postern/internal/atomicfile"
	"github.com/postern-mcp/postern/internal/config"
	"github.com/postern-mcp/postern/internal/termsafe"
	"github.com/spf13/cobra"
)

// postern service install writes a systemd user unit (Linux) or a launchd agent (macOS) that
// runs postern watch at login, from the templates below, shown in full before it is written;
// a record beside the configuration (service.json) says what was written and which folders
// were made for it, so that remove deletes exactly that and leaves the home as it was.

// serviceUnit is the unit's name (postern-watch.service) and the agent's label.
const (
	serviceUnit  = "postern-watch.service"
	serviceLabel = "io.github.postern-mcp.watch"
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

// serviceFile is the file install writes for goos under home: its path and its text.
func serviceFile(goos, home, binary, cfgPath string) (string, []byte, error) {
	data := struct{ Binary, Config, Label, Log string }{binary, cfgPath, serviceLabel, filepath.Join(home, "Library", "Logs", "postern-watch.log")}
	var b bytes.Buffer
	var path string
	switch goos {
	case "linux":
		path = filepath.Join(home, ".config", "systemd", "user", serviceUnit)
		if err := systemdTemplate.Execute(&b, data); err != nil {
			return "", nil, err
		}
	case "darwin":
		path = filepath.Join(home, "Library", "LaunchAgents", serviceLabel+".plist")
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

// serviceRecord is what install wrote, kept for remove.
type serviceRecord struct {
	File   string    `json:"file"`
	SHA256 string    `json:"sha256"`
	Made   []string  `json:"made,omitempty"` // folders made for it and for this record
	At     time.Time `json:"at"`
}

func serviceRecordPath(cfgPath string) string {
	return filepath.Join(filepath.Dir(cfgPath), "service.json")
}

type serviceFlags struct {
	config       string
	yes, noStart bool
}

func newServiceCmd(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	var in, rm serviceFlags
	install := &cobra.Command{
		Use:   "install",
		Short: "run postern watch at login (a systemd user unit or a launchd agent; shown, then asked)",
		Long: `Write a systemd user unit (Linux: ~/.config/systemd/user/` + serviceUnit + `) or
a launchd agent (macOS: ~/Library/LaunchAgents/` + serviceLabel + `.plist) that runs
postern watch --config PATH at login, so that the store stays synced without a
postern mcp running. The file is shown in full first and written only after a yes
(--yes: without asking; without a terminal, --yes is needed). On Linux postern
then runs systemctl --user daemon-reload and enable --now (unless --no-start, or
when systemctl is missing: the commands are printed). postern service remove
deletes exactly what was written.`,
		Example: "  postern service install\n  postern service install --yes --no-start",
		Args:    noArgs,
		RunE: func(_ *cobra.Command, _ []string) error {
			return cmdServiceInstall(&in, runtime.GOOS, stdin, stdout, stderr)
		},
	}
	addConfigFlag(install, &in.config)
	install.Flags().BoolVar(&in.yes, "yes", false, "write it without asking")
	install.Flags().BoolVar(&in.noStart, "no-start", false, "only write the file: do not run systemctl or launchctl")
	remove := &cobra.Command{
		Use:   "remove",
		Short: "stop the service and delete exactly the file install wrote",
		Long: `Stop and disable the service (when systemctl or launchctl is there, unless
--no-start), then delete the file postern service install wrote, the folders it
made for it when they are empty, and its record, leaving the home as it was. A
file changed since it was written is left alone, and said so.`,
		Example: "  postern service remove",
		Args:    noArgs,
		RunE: func(_ *cobra.Command, _ []string) error {
			return cmdServiceRemove(&rm, stdout, stderr)
		},
	}
	addConfigFlag(remove, &rm.config)
	remove.Flags().BoolVar(&rm.noStart, "no-start", false, "do not run systemctl or launchctl to stop it")
	return group("service", "run postern watch at login (systemd user unit or launchd agent)",
		`Install or remove a service that runs postern watch at login, keeping the
local store synced even while no agent host runs postern mcp.`, install, remove)
}

func cmdServiceInstall(f *serviceFlags, goos string, stdin io.Reader, stdout, stderr io.Writer) error {
	cfgPath, err := filepath.Abs(f.config)
	if err != nil {
		return err
	}
	if _, err := config.Load(cfgPath); err != nil {
		return err
	}
	bin, err := os.Executable()
	if err != nil {
		return fmt.Errorf("cannot tell where postern is (%v); run it by its full path", err)
	}
	if b, err := filepath.EvalSymlinks(bin); err == nil {
		bin = b
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return fmt.Errorf("cannot tell the home folder (%v); set HOME", err)
	}
	path, text, err := serviceFile(goos, home, bin, cfgPath)
	if err != nil {
		return err
	}
	recPath := serviceRecordPath(cfgPath)
	if old, err := os.ReadFile(path); err == nil && !bytes.Equal(old, text) {
		if _, err := os.Stat(recPath); err != nil {
			return fmt.Errorf("%s exists and was not written by postern service install; move it away first", path)
		}
	}
	fmt.Fprintf(stdout, "postern service install writes %s:\n\n%s\n", termsafe.Line(path), termsafe.Text(string(text)))
	if !f.yes {
		if !stdinIsTerminal() {
			return errors.New("nothing was written: there is no terminal to ask; run again with --yes to write it")
		}
		fmt.Fprint(stdout, "Write it? [y/N] ")
		line, _ := bufio.NewReader(stdin).ReadString('\n')
		if a := strings.ToLower(strings.TrimSpace(line)); a != "y" && a != "yes" {
			fmt.Fprintln(stdout, "Nothing was written.")
			return exitError{1}
		}
	}
	made, err := mkdirsRecorded(filepath.Dir(path))
	if err != nil {
		return err
	}
	recDirs, err := mkdirsRecorded(filepath.Dir(recPath))
	if err != nil {
		return err
	}
	sum := sha256.Sum256(text)
	rec := serviceRecord{File: path, SHA256: hex.EncodeToString(sum[:]), Made: append(made, recDirs...), At: time.Now().UTC()}
	if prev, err := loadServiceRecord(recPath); err == nil && prev.File == path {
		rec.Made = prev.Made // the folders the first install made are still the ones to remove
	}
	rb, _ := json.MarshalIndent(rec, "", "  ")
	if err := atomicfile.Write(recPath, ".service-*.json", append(rb, '\n')); err != nil {
		return err
	}
	if err := atomicfile.Write(path, ".postern-watch-*", text); err != nil {
		return err
	}
	os.Chmod(path, 0o644) // read by the service manager
	fmt.Fprintf(stdout, "Wrote %s.\n", termsafe.Line(path))
	start := serviceStart(goos, path)
	if f.noStart {
		fmt.Fprintf(stdout, "Not started (--no-start); to start it: %s\n", strings.Join(start, " && "))
		return nil
	}
	return runService(start, stdout, stderr)
}

// serviceStart and serviceStop are the commands that start and stop the service at path.
func serviceStart(goos, path string) []string {
	if goos == "darwin" {
		return []string{"launchctl load -w " + shellQuote(path)}
	}
	return []string{"systemctl --user daemon-reload", "systemctl --user enable --now " + serviceUnit}
}

func serviceStop(goos, path string) []string {
	if goos == "darwin" {
		return []string{"launchctl unload -w " + shellQuote(path)}
	}
	return []string{"systemctl --user disable --now " + serviceUnit, "systemctl --user daemon-reload"}
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// runService runs the commands (split on spaces, the path last and quoted) when their program
// is on PATH; else it prints them for the person.
func runService(cmds []string, stdout, stderr io.Writer) error {
	for _, c := range cmds {
		words := strings.Fields(c)
		if _, err := exec.LookPath(words[0]); err != nil {
			fmt.Fprintf(stdout, "%s is not on PATH; run yourself: %s\n", words[0], strings.Join(cmds, " && "))
			return nil
		}
		for i, w := range words {
			if strings.HasPrefix(w, "'") {
				words = append(words[:i], strings.Trim(strings.Join(words[i:], " "), "'"))
				break
			}
		}
		out, err := exec.Command(words[0], words[1:]...).CombinedOutput()
		if err != nil {
			fmt.Fprintf(stderr, "postern: %s failed: %s\n", termsafe.Line(c), termsafe.Line(strings.TrimSpace(string(out))))
			return exitError{1}
		}
	}
	fmt.Fprintf(stdout, "Ran %s.\n", strings.Join(cmds, " && "))
	return nil
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

func loadServiceRecord(path string) (*serviceRecord, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r serviceRecord
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s cannot be read (%v); delete the service file yourself", path, err)
	}
	return &r, nil
}

func cmdServiceRemove(f *serviceFlags, stdout, stderr io.Writer) error {
	cfgPath, err := filepath.Abs(f.config)
	if err != nil {
		return err
	}
	recPath := serviceRecordPath(cfgPath)
	rec, err := loadServiceRecord(recPath)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("no service was installed for %s (there is no %s); nothing was removed", cfgPath, recPath)
	}
	if err != nil {
		return err
	}
	goos := "linux"
	if strings.HasSuffix(rec.File, ".plist") {
		goos = "darwin"
	}
	if b, err := os.ReadFile(rec.File); err == nil {
		sum := sha256.Sum256(b)
		if hex.EncodeToString(sum[:]) != rec.SHA256 {
			return fmt.Errorf("%s was changed since postern service install wrote it, so it is left alone; delete it yourself, then %s", rec.File, recPath)
		}
		if !f.noStart {
			if err := runService(serviceStop(goos, rec.File), stdout, stderr); err != nil {
				return err
			}
		}
		if err := os.Remove(rec.File); err != nil {
			return fmt.Errorf("cannot delete %s: %w", rec.File, err)
		}
		fmt.Fprintf(stdout, "Deleted %s.\n", termsafe.Line(rec.File))
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := os.Remove(recPath); err != nil {
		return fmt.Errorf("cannot delete %s: %w", recPath, err)
	}
	// Deepest first: a folder made inside another made is emptied before it.
	sort.Slice(rec.Made, func(i, j int) bool { return len(rec.Made[i]) > len(rec.Made[j]) })
	for _, d := range rec.Made {
		os.Remove(d) // only when empty: a folder that holds anything else stays
	}
	return nil
}
