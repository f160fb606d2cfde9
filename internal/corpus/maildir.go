package corpus

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// MaildirDir returns the directory, relative to a Maildir++ root, that
// Dovecot reads folder from: "" for INBOX, ".Archive" for "Archive",
// ".Work.Projects" for "Work/Projects".
func MaildirDir(folder string) (string, error) {
	if strings.EqualFold(folder, "INBOX") {
		return "", nil
	}
	if folder == "" || strings.HasPrefix(folder, "/") || strings.HasSuffix(folder, "/") || strings.Contains(folder, "//") {
		return "", fmt.Errorf("corpus: folder %q is not a valid mailbox name; use names like \"Archive\" or \"Work/Projects\"", folder)
	}
	for _, c := range folder {
		if c == '.' || c == '&' || c < 0x20 || c >= 0x7F {
			return "", fmt.Errorf("corpus: folder %q has %q, which the Maildir++ layout cannot hold as is; use ASCII letters, digits, spaces and \"/\"", folder, c)
		}
	}
	return "." + strings.ReplaceAll(folder, "/", "."), nil
}

// maildirFlags maps IMAP system flags to Maildir info letters, in ASCII order.
func maildirFlags(flags []string) string {
	var b []byte
	for _, f := range []struct {
		letter byte
		flag   string
	}{{'D', `\Draft`}, {'F', `\Flagged`}, {'R', `\Answered`}, {'S', `\Seen`}, {'T', `\Deleted`}} {
		for _, g := range flags {
			if g == f.flag {
				b = append(b, f.letter)
				break
			}
		}
	}
	return string(b)
}

// WriteMaildir writes the corpus under root in the Maildir++ layout Dovecot
// reads by default ("." as hierarchy separator): INBOX in root/{cur,new,tmp},
// "Work/Projects" in root/.Work.Projects/{cur,new,tmp}. Messages go to cur/
// as "<unix>.<index>.corpus:2,<flags>" with the file's mtime set to the
// message date, and root/subscriptions lists every folder. It returns the
// number of messages written.
func WriteMaildir(root string, opt Options) (int, error) {
	folders := opt.Folders
	if len(folders) == 0 {
		folders = DefaultFolders
	}
	dirs := map[string]string{} // folder name to directory; lookups only
	made := map[string]bool{}
	var subs strings.Builder
	for _, f := range append([]string{"INBOX"}, folders...) {
		d, err := MaildirDir(f)
		if err != nil {
			return 0, err
		}
		dirs[f] = filepath.Join(root, d)
		if made[d] {
			continue
		}
		made[d] = true
		for _, sub := range []string{"cur", "new", "tmp"} {
			if err := os.MkdirAll(filepath.Join(root, d, sub), 0o755); err != nil {
				return 0, fmt.Errorf("corpus: create Maildir folder: %w", err)
			}
		}
		if d != "" {
			if err := os.WriteFile(filepath.Join(root, d, "maildirfolder"), nil, 0o644); err != nil {
				return 0, fmt.Errorf("corpus: create Maildir folder: %w", err)
			}
			subs.WriteString(d[1:] + "\n")
		} else {
			subs.WriteString("INBOX\n")
		}
	}
	if err := os.WriteFile(filepath.Join(root, "subscriptions"), []byte(subs.String()), 0o644); err != nil {
		return 0, fmt.Errorf("corpus: write Maildir subscriptions: %w", err)
	}
	written := 0
	err := Each(opt, func(i int, m *Message) error {
		name := fmt.Sprintf("%d.%d.corpus:2,%s", m.Date.Unix(), i, maildirFlags(m.Flags))
		p := filepath.Join(dirs[m.Folder], "cur", name)
		if err := os.WriteFile(p, m.Raw, 0o644); err != nil {
			return fmt.Errorf("corpus: write message %d: %w", i, err)
		}
		if err := os.Chtimes(p, m.Date, m.Date); err != nil {
			return fmt.Errorf("corpus: set date of message %d: %w", i, err)
		}
		written++
		return nil
	})
	return written, err
}
