package service

import (
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLaunchdPlist: the agent written on macOS is a well-formed property list that
// runs postern watch with the configuration, each path escaped.
func TestLaunchdPlist(t *testing.T) {
	path, text, err := File("darwin", "/Users/sam", "/opt/post&ern/postern", "/Users/sam/<cfg>.toml")
	if err != nil {
		t.Fatal(err)
	}
	if path != "/Users/sam/Library/LaunchAgents/"+Label+".plist" {
		t.Fatalf("plist path %s", path)
	}
	var plist struct {
		XMLName xml.Name `xml:"plist"`
		Dict    struct {
			Keys    []string `xml:"key"`
			Strings []string `xml:"string"`
			Array   struct {
				Strings []string `xml:"string"`
			} `xml:"array"`
		} `xml:"dict"`
	}
	if err := xml.Unmarshal(text, &plist); err != nil {
		t.Fatalf("the plist is not well-formed XML: %v\n%s", err, text)
	}
	want := []string{"/opt/post&ern/postern", "watch", "--config", "/Users/sam/<cfg>.toml"}
	if strings.Join(plist.Dict.Array.Strings, "|") != strings.Join(want, "|") {
		t.Fatalf("ProgramArguments %q, want %q", plist.Dict.Array.Strings, want)
	}
	if strings.Join(plist.Dict.Keys, ",") != "Label,ProgramArguments,RunAtLoad,KeepAlive,StandardErrorPath" || plist.Dict.Strings[0] != Label {
		t.Fatalf("plist keys %v strings %v", plist.Dict.Keys, plist.Dict.Strings)
	}
	if !strings.Contains(string(text), "<!DOCTYPE plist PUBLIC \"-//Apple//DTD PLIST 1.0//EN\"") {
		t.Fatal("no plist doctype")
	}
	if _, _, err := File("plan9", "/h", "/b", "/c"); err == nil {
		t.Fatal("a system without systemd or launchd is accepted")
	}
	_, unit, _ := File("linux", "/home/sam", "/opt/100%/postern", `/home/sam/a "b"/$c.toml`)
	if !strings.Contains(string(unit), `ExecStart="/opt/100%%/postern" watch --config "/home/sam/a \"b\"/$$c.toml"`) {
		t.Fatalf("ExecStart not escaped:\n%s", unit)
	}
}

// Install writes the file and the folders it needs; remove deletes exactly those, and leaves
// a file changed since alone.
func TestInstallThenRemoveLeavesHomeAsItWas(t *testing.T) {
	home := t.TempDir()
	cfgDir := filepath.Join(home, ".config", "postern")
	os.MkdirAll(cfgDir, 0o700)
	cfg := filepath.Join(cfgDir, "config.toml")
	os.WriteFile(cfg, nil, 0o600)
	in, err := Plan("linux", home, "/usr/bin/postern", cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := in.Write(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(home, ".config", "systemd", "user", Unit))
	if err != nil || !strings.Contains(string(b), `ExecStart="/usr/bin/postern" watch --config "`+cfg+`"`) {
		t.Fatalf("unit %q, %v", b, err)
	}
	found, err := Find(cfg)
	if err != nil || !found.Present || found.GOOS != "linux" {
		t.Fatalf("Find: %+v, %v", found, err)
	}
	if err := found.RemoveFile(); err != nil {
		t.Fatal(err)
	}
	if err := found.RemoveRecord(); err != nil {
		t.Fatal(err)
	}
	for _, gone := range []string{filepath.Join(home, ".config", "systemd"), RecordPath(cfg)} {
		if _, err := os.Stat(gone); !os.IsNotExist(err) {
			t.Fatalf("%s is still there", gone)
		}
	}
	if _, err := os.Stat(cfg); err != nil {
		t.Fatalf("the configuration went too: %v", err)
	}
	if _, err := Find(cfg); err == nil || !strings.Contains(err.Error(), "no service was installed") {
		t.Fatalf("a second Find: %v", err)
	}

	// A file that is there and not ours is refused; one changed since is left alone.
	unit := filepath.Join(home, ".config", "systemd", "user", Unit)
	os.MkdirAll(filepath.Dir(unit), 0o700)
	os.WriteFile(unit, []byte("mine"), 0o644)
	if _, err := Plan("linux", home, "/usr/bin/postern", cfg); err == nil || !strings.Contains(err.Error(), "not written by postern") {
		t.Fatalf("Plan over another file: %v", err)
	}
	os.Remove(unit)
	in, _ = Plan("linux", home, "/usr/bin/postern", cfg)
	if err := in.Write(); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(unit, []byte("edited"), 0o644)
	if _, err := Find(cfg); err == nil || !strings.Contains(err.Error(), "was changed since") {
		t.Fatalf("Find after an edit: %v", err)
	}
}

func TestCommands(t *testing.T) {
	stop := Stop("darwin", "/Users/sam/My Agents/x.plist")
	if got := Words(stop[0]); strings.Join(got, "|") != "launchctl|unload|-w|/Users/sam/My Agents/x.plist" {
		t.Fatalf("Words(%q) = %q: want the quoted path as one word", stop[0], got)
	}
	if got := Words(Start("linux", "/x")[1]); strings.Join(got, " ") != "systemctl --user enable --now "+Unit {
		t.Fatalf("start words %q", got)
	}
}
