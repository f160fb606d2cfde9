package config

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// How a person sets the save folder, for the sentences that refuse one.
const setSaveDir = "set save_dir in the configuration file (or start postern mcp with --save-dir DIR) to a folder such as ~/Downloads"

// DownloadDir is the XDG download folder: $XDG_DOWNLOAD_DIR when it is an absolute path, else
// XDG_DOWNLOAD_DIR of $XDG_CONFIG_HOME/user-dirs.dirs (as xdg-user-dirs writes it), else
// ~/Downloads. It may not exist.
func DownloadDir() string {
	if v := os.Getenv("XDG_DOWNLOAD_DIR"); filepath.IsAbs(v) {
		return filepath.Clean(v)
	}
	home, _ := os.UserHomeDir()
	if v := userDir(filepath.Join(xdg("XDG_CONFIG_HOME", ".config"), "user-dirs.dirs"), "XDG_DOWNLOAD_DIR", home); v != "" {
		return v
	}
	if home == "" {
		return ""
	}
	return filepath.Join(home, "Downloads")
}

// userDir reads key from a user-dirs.dirs file: lines KEY="$HOME/path" or KEY="/path".
func userDir(path, key, home string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), "=")
		if !ok || strings.TrimSpace(k) != key {
			continue
		}
		v = strings.Trim(strings.TrimSpace(v), `"`)
		if rest, ok := strings.CutPrefix(v, "$HOME"); ok && home != "" && (rest == "" || rest[0] == '/') {
			v = home + rest
		}
		if filepath.IsAbs(v) {
			return filepath.Clean(v)
		}
	}
	return ""
}

// SaveFolder is the folder attachments are saved in: flag (postern mcp --save-dir, relative to
// the working folder) when set, else configured (save_dir: absolute or ~/…), else DownloadDir,
// in which case isDefault is true. It refuses, saying what to set instead, a folder that
// CheckSaveDir refuses; it does not look whether the folder exists.
func SaveFolder(flag, configured string) (dir string, isDefault bool, err error) {
	home, _ := os.UserHomeDir()
	switch {
	case flag != "":
		dir, err = filepath.Abs(expandHome(flag, home))
		if err != nil {
			return "", false, fmt.Errorf("--save-dir %q cannot be made absolute (%v); give an absolute folder", flag, err)
		}
	case configured != "":
		dir = expandHome(configured, home)
		if !filepath.IsAbs(dir) {
			return "", false, fmt.Errorf("save_dir %q in the configuration is not an absolute path; write it as /path or ~/path", configured)
		}
	default:
		dir, isDefault = DownloadDir(), true
		if dir == "" {
			return "", false, errors.New("postern cannot tell where your home folder is, so it has no download folder; " + setSaveDir)
		}
	}
	dir = filepath.Clean(dir)
	if err := CheckSaveDir(dir, home); err != nil {
		return "", false, err
	}
	return dir, isDefault, nil
}

func expandHome(p, home string) string {
	if home == "" {
		return p
	}
	if p == "~" {
		return home
	}
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		return filepath.Join(home, rest)
	}
	return p
}

// CheckSaveDir says why dir (absolute, clean) cannot be a save folder, or nil: the home folder
// itself, a folder that holds it (/, /home) and a hidden folder (a component that starts with
// '.', below home when dir is inside it, such as ~/.ssh or ~/.config/x) are refused, as written
// and as resolved through symbolic links, so that a link to ~/.ssh is refused too.
func CheckSaveDir(dir, home string) error {
	paths := []string{dir}
	if real, err := filepath.EvalSymlinks(dir); err == nil && real != dir {
		paths = append(paths, real)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("the save folder %s cannot be used (%v); %s", dir, err, setSaveDir)
	}
	homes := []string{}
	if home != "" {
		homes = append(homes, filepath.Clean(home))
		if real, err := filepath.EvalSymlinks(home); err == nil && real != home {
			homes = append(homes, real)
		}
	}
	for _, p := range paths {
		if p == string(filepath.Separator) || filepath.Dir(p) == p {
			return fmt.Errorf("the save folder %s is the top of the file system, which postern never saves attachments into; %s", dir, setSaveDir)
		}
		below := p // the part of p checked for hidden folders
		for _, h := range homes {
			switch {
			case p == h:
				return fmt.Errorf("the save folder %s is your home folder, which postern never saves attachments into (they would mix with your settings); %s", dir, setSaveDir)
			case within(p, h):
				return fmt.Errorf("the save folder %s holds your home folder, which postern never saves attachments into; %s", dir, setSaveDir)
			case within(h, p):
				below, _ = filepath.Rel(h, p)
			}
		}
		for _, c := range strings.Split(filepath.ToSlash(below), "/") {
			if strings.HasPrefix(c, ".") && c != "." {
				return fmt.Errorf("the save folder %s is in the hidden folder %q, where programs keep their settings, which postern never saves attachments into; %s", dir, c, setSaveDir)
			}
		}
	}
	return nil
}

// within reports whether path is strictly below base.
func within(base, path string) bool {
	rel, err := filepath.Rel(base, path)
	return err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}
