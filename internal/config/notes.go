package config

import (
	"fmt"
	"os"
	"path/filepath"
)

// Notes is the [notes] section: the folders of Markdown files the notes tools read and
// note_add writes into. folder = "~/Notes" names one; folders = ["~/Notes", "~/Work/notes"]
// several; both may be given (folder first).
type Notes struct {
	Folder  string   `toml:"folder,omitempty"`
	Folders []string `toml:"folders,omitempty"`
}

// NotesFolders are the configured notes folders that can be used, absolute and clean (~
// expanded), in the order written, each once; and a sentence for each that cannot (not
// absolute, missing, not a folder). Problems lists the same sentences.
func (c *Config) NotesFolders() (folders []string, problems []string) {
	home, _ := os.UserHomeDir()
	var written []string
	if c.Notes.Folder != "" {
		written = append(written, c.Notes.Folder)
	}
	written = append(written, c.Notes.Folders...)
	seen := map[string]bool{}
	for _, w := range written {
		dir := expandHome(w, home)
		if !filepath.IsAbs(dir) {
			problems = append(problems, fmt.Sprintf("[notes] folder %q is not an absolute path; write it as /path or ~/path", w))
			continue
		}
		dir = filepath.Clean(dir)
		fi, err := os.Stat(dir)
		switch {
		case err != nil:
			problems = append(problems, fmt.Sprintf("[notes] folder %s cannot be read (%v); create it or correct the path in the configuration", dir, unwrapPath(err)))
			continue
		case !fi.IsDir():
			problems = append(problems, fmt.Sprintf("[notes] folder %s is a file, not a folder; give the folder that holds your notes", dir))
			continue
		}
		if seen[dir] {
			continue
		}
		seen[dir] = true
		folders = append(folders, dir)
	}
	// A folder inside another would show its notes twice, under two names.
	var out []string
	for _, d := range folders {
		inside := ""
		for _, o := range folders {
			if within(o, d) {
				inside = o
				break
			}
		}
		if inside != "" {
			problems = append(problems, fmt.Sprintf("[notes] folder %s is inside %s, which already holds its notes; remove one of them from the configuration", d, inside))
			continue
		}
		out = append(out, d)
	}
	return out, problems
}

// unwrapPath is the reason of a *PathError without the path, which the sentence already says.
func unwrapPath(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}
