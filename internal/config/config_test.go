package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestApprovalSettings: the [approval] section is read with its defaults, and
// a mode, lifetime or wait outside what postern allows is refused naming it.
func TestApprovalSettings(t *testing.T) {
	write := func(body string) string {
		p := filepath.Join(t.TempDir(), "config.toml")
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	c, err := Load(write("[approval]\nmode = \"host\"\nttl = \"90s\"\nwait = \"10m\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Approval.Mode != "host" || c.Approval.TTL.Duration != 90*time.Second || c.Approval.Wait.Duration != 10*time.Minute {
		t.Fatalf("read %+v", c.Approval)
	}
	if c, err := Load(write("")); err != nil || c.Approval.Mode != "" || c.Approval.TTL.Duration != 0 {
		t.Fatalf("empty file: %+v %v", c, err)
	}
	for body, want := range map[string]string{
		"[approval]\nmode = \"auto\"\n":                                     "mode",
		"[approval]\nttl = \"5s\"\n":                                        "ttl",
		"[approval]\nttl = \"1h\"\n":                                        "ttl",
		"[approval]\nttl = \"soon\"\n":                                      "duration",
		"[approval]\nwait = \"2h\"\n":                                       "wait",
		"[[accounts]]\nname = \"w\"\nkind = \"imap\"\nsmtp_tls = \"ssl\"\n": "smtp_tls",
	} {
		if _, err := Load(write(body)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v", body, err)
		}
	}
}

// TestAccountFromAndSMTPSecurity: the From falls back to an address-like user,
// and the SMTP security follows the port unless set.
func TestAccountFromAndSMTPSecurity(t *testing.T) {
	for _, c := range []struct {
		a         Account
		from, sec string
	}{
		{Account{User: "me@example.com", SMTP: "smtp.example.com:465"}, "me@example.com", "implicit"},
		{Account{User: "me", Address: "me@example.com", SMTP: "smtp.example.com:587"}, "me@example.com", "starttls"},
		{Account{User: "me", SMTP: "127.0.0.1:25", SMTPTLS: "none"}, "", "none"},
	} {
		if c.a.From() != c.from || c.a.SMTPSecurity() != c.sec {
			t.Errorf("%+v: from %q security %q", c.a, c.a.From(), c.a.SMTPSecurity())
		}
	}
}

func TestNotesFolders(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	notes := filepath.Join(home, "Notes")
	work := filepath.Join(home, "Work", "notes")
	os.MkdirAll(notes, 0o700)
	os.MkdirAll(work, 0o700)
	os.WriteFile(filepath.Join(home, "file"), nil, 0o600)
	path := filepath.Join(t.TempDir(), "config.toml")
	os.WriteFile(path, []byte(`[notes]
folder = "~/Notes"
folders = ["~/Work/notes", "relative", "~/missing", "~/file", "~/Notes/", "~/Notes/sub"]
`), 0o600)
	os.MkdirAll(filepath.Join(notes, "sub"), 0o700)
	c, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	got, problems := c.NotesFolders()
	if len(got) != 2 || got[0] != notes || got[1] != work {
		t.Fatalf("folders %q", got)
	}
	want := []string{`"relative" is not an absolute path`, "missing cannot be read", "file is a file, not a folder", "sub is inside " + notes}
	if len(problems) != len(want) {
		t.Fatalf("problems %q", problems)
	}
	for i, w := range want {
		if !strings.Contains(problems[i], w) || strings.Count(problems[i], ";") != 1 {
			t.Errorf("problem %d: %q, want %q in one sentence", i, problems[i], w)
		}
	}
	if ps := c.Problems(nil); len(ps) != len(want) {
		t.Errorf("Problems: %q", ps)
	}
}
