package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDownloadDir: $XDG_DOWNLOAD_DIR, else user-dirs.dirs, else ~/Downloads.
func TestDownloadDir(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("XDG_DOWNLOAD_DIR", "")
	if got := DownloadDir(); got != filepath.Join(home, "Downloads") {
		t.Errorf("no setting: %q", got)
	}
	os.MkdirAll(filepath.Join(home, ".config"), 0o700)
	os.WriteFile(filepath.Join(home, ".config", "user-dirs.dirs"), []byte("# written by xdg-user-dirs-update\nXDG_DESKTOP_DIR=\"$HOME/Desktop\"\nXDG_DOWNLOAD_DIR=\"$HOME/Téléchargements\"\n"), 0o600)
	if got := DownloadDir(); got != filepath.Join(home, "Téléchargements") {
		t.Errorf("user-dirs.dirs: %q", got)
	}
	t.Setenv("XDG_DOWNLOAD_DIR", "/srv/dl")
	if got := DownloadDir(); got != "/srv/dl" {
		t.Errorf("XDG_DOWNLOAD_DIR: %q", got)
	}
	t.Setenv("XDG_DOWNLOAD_DIR", "relative/dl") // not absolute: ignored
	if got := DownloadDir(); got != filepath.Join(home, "Téléchargements") {
		t.Errorf("relative XDG_DOWNLOAD_DIR: %q", got)
	}
}

// TestSaveFolderRules: the flag over the configuration over the download folder; the home
// folder, the folders above it and hidden folders are refused, also through a link, each with a
// sentence saying what to set.
func TestSaveFolderRules(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("XDG_DOWNLOAD_DIR", "")
	os.MkdirAll(filepath.Join(home, ".ssh"), 0o700)
	os.MkdirAll(filepath.Join(home, "Mail"), 0o700)
	os.Symlink(filepath.Join(home, ".ssh"), filepath.Join(home, "keys"))
	os.Symlink(home, filepath.Join(home, "me"))

	if dir, def, err := SaveFolder("", ""); err != nil || !def || dir != filepath.Join(home, "Downloads") {
		t.Errorf("default: %q %v %v", dir, def, err)
	}
	if dir, def, err := SaveFolder("", "~/Mail"); err != nil || def || dir != filepath.Join(home, "Mail") {
		t.Errorf("save_dir ~/Mail: %q %v %v", dir, def, err)
	}
	if dir, _, err := SaveFolder(filepath.Join(home, "Mail"), "~/Other"); err != nil || dir != filepath.Join(home, "Mail") {
		t.Errorf("the flag does not win: %q %v", dir, err)
	}
	if dir, _, err := SaveFolder("", "/srv/attachments"); err != nil || dir != "/srv/attachments" {
		t.Errorf("a folder outside home: %q %v", dir, err)
	}
	refused := map[string]string{
		home:                                    "home folder",
		home + "/":                              "home folder",
		"~":                                     "home folder",
		filepath.Join(home, "me"):               "home folder", // a link to it
		filepath.Dir(home):                      "holds your home",
		"/":                                     "top of the file system",
		filepath.Join(home, ".ssh"):             "hidden folder",
		filepath.Join(home, ".config", "dl"):    "hidden folder",
		filepath.Join(home, "keys"):             "hidden folder", // a link to ~/.ssh
		"/srv/.cache/x":                         "hidden folder",
		filepath.Join(home, "Mail", "..", ".."): "holds your home",
	}
	for dir, why := range refused {
		for _, how := range []string{"flag", "config"} {
			var err error
			if how == "flag" {
				_, _, err = SaveFolder(dir, "")
			} else {
				_, _, err = SaveFolder("", dir)
			}
			if err == nil {
				t.Errorf("%s %q accepted", how, dir)
				continue
			}
			if !strings.Contains(err.Error(), why) || !strings.Contains(err.Error(), "save_dir") || !strings.Contains(err.Error(), "--save-dir") {
				t.Errorf("%s %q: %v (want %q and what to set)", how, dir, err, why)
			}
		}
	}
	if _, _, err := SaveFolder("", "relative/dir"); err == nil || !strings.Contains(err.Error(), "absolute") {
		t.Errorf("a relative save_dir: %v", err)
	}
	// The download folder itself set to home (xdg-user-dirs' way to disable it) is refused too.
	t.Setenv("XDG_DOWNLOAD_DIR", home)
	if _, _, err := SaveFolder("", ""); err == nil || !strings.Contains(err.Error(), "home folder") {
		t.Errorf("download folder = home: %v", err)
	}
}
