package config

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const personsFile = `# my postern settings
time_zone = "Europe/Paris"

[mcp]
scopes = ["read"] # only reading for now

[[accounts]]
# the work account
name = "work"
kind = "imap"
server = "imap.example.com:993"
user   = "me@example.com" # my login
password_cmd = "pass show work"

[[accounts]]
name = "old"
kind = "maildir"
path = "/home/me/Maildir"
`

func writeFile(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func read(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestAccountEditsKeepTheRest: account add, set and remove change only the account's lines;
// the person's comments, key order, sections and other accounts stay as they wrote them, and
// an edit that would make the file invalid or cannot be made safely leaves it untouched.
func TestAccountEditsKeepTheRest(t *testing.T) {
	p := writeFile(t, personsFile)

	// Add.
	if err := AddAccount(p, Account{Name: "home", Kind: "imap", Server: "mail.home.example:143", User: "me", PasswordCmd: "cat ~/.pw"}); err != nil {
		t.Fatal(err)
	}
	got := read(t, p)
	if !strings.HasPrefix(got, personsFile) {
		t.Fatalf("add changed what was there:\n%s", got)
	}
	if !strings.Contains(got, "\n[[accounts]]\nname = \"home\"\n") || !strings.Contains(got, `server = "mail.home.example:143"`) {
		t.Fatalf("the added account:\n%s", got)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v after add; want 0600", fi.Mode().Perm())
	}
	if err := AddAccount(p, Account{Name: "work", Kind: "imap"}); err == nil || !strings.Contains(err.Error(), `an account named "work" exists already`) {
		t.Errorf("adding a second work: %v", err)
	}
	before := read(t, p)
	if err := AddAccount(p, Account{Name: "bad", Kind: "imap", SMTPTLS: "ssl"}); err == nil || !strings.Contains(err.Error(), "would be invalid") || !strings.Contains(err.Error(), "smtp_tls") {
		t.Errorf("adding an invalid account: %v", err)
	}
	if read(t, p) != before {
		t.Error("a refused add changed the file")
	}

	// Set: one value changed, one added, one removed.
	cfg, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	w := cfg.Accounts[0]
	w.Server = "imap.example.com:143"
	w.Address = "me@example.org"
	w.PasswordCmd = ""
	if err := SetAccount(p, w); err != nil {
		t.Fatal(err)
	}
	got = read(t, p)
	for _, keep := range []string{"# my postern settings\n", `user   = "me@example.com" # my login`, `scopes = ["read"] # only reading for now`, "# the work account\nname = \"work\"\n", `path = "/home/me/Maildir"`, `name = "home"`} {
		if !strings.Contains(got, keep) {
			t.Errorf("set lost %q:\n%s", keep, got)
		}
	}
	if !strings.Contains(got, `server = "imap.example.com:143"`) || strings.Contains(got, "993") || strings.Contains(got, "pass show work") || !strings.Contains(got, `address = "me@example.org"`) {
		t.Errorf("set did not change what it was asked:\n%s", got)
	}
	if strings.Index(got, `address = "me@example.org"`) > strings.Index(got, `name = "old"`) {
		t.Errorf("the added key left its account's block:\n%s", got)
	}
	cfg, err = Load(p)
	if err != nil || len(cfg.Accounts) != 3 || cfg.Accounts[0].Server != "imap.example.com:143" || cfg.Accounts[0].PasswordCmd != "" || cfg.Accounts[1].Path != "/home/me/Maildir" {
		t.Fatalf("read back after set: %+v, %v", cfg, err)
	}
	if err := SetAccount(p, Account{Name: "nobody", Kind: "imap"}); err == nil || !strings.Contains(err.Error(), `no account named "nobody"`) {
		t.Errorf("setting an account that is not there: %v", err)
	}

	// Remove.
	if ok, err := RemoveAccount(p, "nobody"); ok || err != nil {
		t.Errorf("removing an account that is not there: %v, %v", ok, err)
	}
	if ok, err := RemoveAccount(p, "old"); !ok || err != nil {
		t.Fatalf("remove: %v, %v", ok, err)
	}
	got = read(t, p)
	if strings.Contains(got, "Maildir") || !strings.Contains(got, "# the work account") || !strings.Contains(got, `name = "home"`) {
		t.Errorf("after remove:\n%s", got)
	}
	if cfg, err := Load(p); err != nil || len(cfg.Accounts) != 2 {
		t.Errorf("read back after remove: %v", err)
	}
}

// TestEditUnusualLayout: an account written as an inline table cannot be edited line by line;
// the person is told to edit by hand and the file is not touched.
func TestEditUnusualLayout(t *testing.T) {
	body := "accounts = [{name = \"w\", kind = \"imap\", server = \"a:993\"}]\n"
	p := writeFile(t, body)
	if err := SetAccount(p, Account{Name: "w", Kind: "imap", Server: "b:993"}); err == nil || !strings.Contains(err.Error(), "edit it by hand") {
		t.Errorf("set in an inline table: %v", err)
	}
	if ok, err := RemoveAccount(p, "w"); err == nil || !ok || !strings.Contains(err.Error(), "edit it by hand") {
		t.Errorf("remove from an inline table: %v, %v", ok, err)
	}
	if read(t, p) != body {
		t.Error("the file was changed")
	}
}

// TestParseErrorsSayWhere: a file that cannot be parsed names its line; unknown keys are named.
func TestParseErrorsSayWhere(t *testing.T) {
	if _, err := Load(writeFile(t, "time_zone = \"UTC\"\n\n\n\n[mcp")); err == nil || !strings.Contains(err.Error(), "cannot be parsed at line 5") {
		t.Errorf("a broken section header: %v", err)
	}
	if _, err := Load(writeFile(t, "zeta = 1\ncolour = 1\n[mcp]\nscopez = []\n")); err == nil || !strings.Contains(err.Error(), "unknown keys (colour, mcp.scopez, zeta)") {
		t.Errorf("unknown keys: %v", err)
	}
	if c, err := Load(filepath.Join(t.TempDir(), "none.toml")); err != nil || len(c.Accounts) != 0 {
		t.Errorf("a missing file: %+v, %v; want an empty configuration", c, err)
	}
	if _, err := Load(t.TempDir()); err == nil || !strings.Contains(err.Error(), "cannot read the configuration") {
		t.Errorf("a folder: %v", err)
	}
	for body, want := range map[string]string{
		"time_zone = \"Mars/Olympus\"\n":                           "not a time zone name",
		"time_zone = \"Local\"\n":                                  "not a time zone name",
		"[[accounts]]\nkind = \"imap\"\n":                          "account 1 has no name",
		"[[accounts]]\nname = \"a\"\n[[accounts]]\nname = \"a\"\n": `account "a" is declared twice`,
	} {
		if _, err := Load(writeFile(t, body)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v; want %q", body, err, want)
		}
	}
}

// withKinds registers two kinds for one test, as the table of kinds does at start.
func withKinds(t *testing.T) {
	old := kinds
	kinds.names, kinds.problems, kinds.parse, kinds.notices = nil, nil, nil, nil
	t.Cleanup(func() { kinds = old })
	RegisterKind("imap", func(a Account) []string {
		if a.Server == "" {
			return []string{"it has no server; set one with postern account set " + a.Name + " --imap HOST:PORT"}
		}
		return nil
	}, nil, nil)
	RegisterKind("maildir", func(Account) []string { return nil }, nil, func(a Account) []string {
		if a.Server != "" {
			return []string{"server is ignored"}
		}
		return nil
	})
	RegisterKind("imap", func(a Account) []string { // registered again: replaced, listed once
		if a.Server == "" {
			return []string{"no server"}
		}
		return nil
	}, nil, nil)
}

// TestNotices: what a kind ignores is said with the account's name, and is not a problem.
func TestNotices(t *testing.T) {
	withKinds(t)
	c := &Config{Accounts: []Account{{Name: "m", Kind: "maildir", Path: "/x", Server: "s:993"}, {Name: "w", Kind: "imap", Server: "s:993"}}}
	if got := c.Notices(); len(got) != 1 || got[0] != "account m: server is ignored" {
		t.Errorf("Notices = %q; want the Maildir account's ignored server", got)
	}
	for _, p := range c.Problems(nil) {
		if strings.Contains(p, "ignored") {
			t.Errorf("an ignored field is a problem: %q", p)
		}
	}
}

// TestProblems: config check's list: an unknown kind named with the kinds there are, the
// kind's own problems after the account's name, a scope that does not exist, a CA file that
// cannot be used, an address that is not bare, a display name with a control character.
func TestProblems(t *testing.T) {
	withKinds(t)
	if _, err := Load(writeFile(t, "[[accounts]]\nname = \"j\"\nkind = \"jmap\"\n")); err == nil || !strings.Contains(err.Error(), `account "j" has kind "jmap"; use imap or maildir`) {
		t.Errorf("an unknown kind: %v", err)
	}
	dir := t.TempDir()
	notPEM := filepath.Join(dir, "ca.pem")
	os.WriteFile(notPEM, []byte("hello"), 0o600)
	c := &Config{
		MCP: MCP{Scopes: []string{"read", "everything"}},
		Accounts: []Account{
			{Name: "a", Kind: "imap"},
			{Name: "b", Kind: "imap", Server: "s:993", TLSCA: filepath.Join(dir, "missing.pem")},
			{Name: "c", Kind: "imap", Server: "s:993", TLSCA: notPEM, Address: "Me <me@example.com>"},
			{Name: "d", Kind: "maildir", DisplayName: "Sam\u202eRivera"},
		},
	}
	ps := c.Problems(func(s string) bool { return s == "read" })
	want := []string{
		`[mcp] scopes grants "everything", which is not a scope`,
		"account a: no server",
		"account b: the CA file " + filepath.Join(dir, "missing.pem") + " cannot be read",
		"account c: the CA file " + notPEM + " holds no PEM certificate",
		`account c: address "Me <me@example.com>" is not a bare address`,
		"account d: the display name",
	}
	if len(ps) != len(want) {
		t.Fatalf("%d problems, want %d:\n%s", len(ps), len(want), strings.Join(ps, "\n"))
	}
	for i, w := range want {
		if !strings.Contains(ps[i], w) {
			t.Errorf("problem %d is %q; want it to say %q", i, ps[i], w)
		}
	}
	if err := ValidDisplayName(strings.Repeat("a", 201)); err == nil || !strings.Contains(err.Error(), "under 200") {
		t.Errorf("a long display name: %v", err)
	}
	if err := ValidDisplayName("Sam Rivera"); err != nil {
		t.Errorf("a plain display name: %v", err)
	}
}

// TestLoadCA: a PEM certificate file is trusted besides the system's; a missing file is said.
func TestLoadCA(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "postern test CA"},
		NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "ca.pem")
	os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	pool, err := LoadCA(path)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	if _, err := cert.Verify(x509.VerifyOptions{Roots: pool}); err != nil {
		t.Errorf("the CA file's certificate is not trusted: %v", err)
	}
	if c := (Account{Name: "x", TLSCA: path}); len(c.Problems()) != 0 {
		t.Errorf("a good CA file is a problem: %q", c.Problems())
	}
	if _, err := LoadCA(filepath.Join(t.TempDir(), "none.pem")); err == nil || !strings.Contains(err.Error(), "cannot be read") {
		t.Errorf("a missing CA file: %v", err)
	}
}

// TestValidAccountName: names are short words a command line and a file name can carry.
func TestValidAccountName(t *testing.T) {
	for name, ok := range map[string]bool{
		"work": true, "me.example-2_b": true, "9": true, strings.Repeat("a", 64): true,
		"": false, ".hidden": false, "-flag": false, "a b": false, "a/b": false, "é": false, strings.Repeat("a", 65): false,
	} {
		if err := ValidAccountName(name); (err == nil) != ok {
			t.Errorf("ValidAccountName(%q) = %v; want ok %v", name, err, ok)
		}
	}
}

// TestSyncSettings: the poll interval's default and floor, and [sync] watch.
func TestSyncSettings(t *testing.T) {
	t.Setenv("POSTERN_SYNC_MIN_INTERVAL", "")
	c, err := Load(writeFile(t, ""))
	if err != nil || c.SyncInterval() != DefaultSyncInterval || !c.Watching() {
		t.Fatalf("defaults: %v %v %v", c.SyncInterval(), c.Watching(), err)
	}
	c, err = Load(writeFile(t, "[sync]\ninterval = \"2m\"\nwatch = false\n"))
	if err != nil || c.SyncInterval() != 2*time.Minute || c.Watching() {
		t.Fatalf("set: %v %v %v", c.SyncInterval(), c.Watching(), err)
	}
	if _, err := Load(writeFile(t, "[sync]\ninterval = \"10s\"\n")); err == nil || !strings.Contains(err.Error(), "poll at most every 30s") {
		t.Errorf("an interval under the floor: %v", err)
	}
	// Read without Load's checks (postern config check), an interval under the floor is
	// still never polled more often than the floor.
	if c, err := Parse(writeFile(t, "[sync]\ninterval = \"10s\"\n")); err != nil || c.SyncInterval() != MinSyncInterval {
		t.Errorf("an unchecked interval under the floor polls every %v, %v", c.SyncInterval(), err)
	}
	t.Setenv("POSTERN_SYNC_MIN_INTERVAL", "1s")
	if c, err := Load(writeFile(t, "[sync]\ninterval = \"10s\"\n")); err != nil || c.SyncInterval() != 10*time.Second {
		t.Errorf("with the floor lowered for tests: %v", err)
	}
	if b, _ := (Duration{90 * time.Second}).MarshalText(); string(b) != "1m30s" {
		t.Errorf("a duration written back as %q", b)
	}
}

// TestFolders: the XDG variables are followed when absolute, else the home's defaults.
func TestFolders(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "/elsewhere/cfg")
	t.Setenv("XDG_DATA_HOME", "relative/data")
	t.Setenv("XDG_STATE_HOME", "")
	if got := DefaultPath(); got != "/elsewhere/cfg/postern/config.toml" {
		t.Errorf("DefaultPath = %q", got)
	}
	if got := DataDir(); got != filepath.Join(home, ".local/share/postern") {
		t.Errorf("DataDir with a relative XDG_DATA_HOME = %q; want the home's", got)
	}
	if got := StateDir(); got != filepath.Join(home, ".local/state/postern") {
		t.Errorf("StateDir = %q", got)
	}
	if got := BackupDir("work"); got != filepath.Join(home, ".local/share/postern/backups/work") {
		t.Errorf("BackupDir = %q", got)
	}
	if (Account{}).BackupRetention() != DefaultBackupDays || (Account{BackupDays: 7}).BackupRetention() != 7 {
		t.Error("backup retention")
	}
}

// TestWatcher: a configuration changed, broken, mended or removed while a server runs is seen.
func TestWatcher(t *testing.T) {
	p := writeFile(t, "[[accounts]]\nname = \"a\"\n")
	w := NewWatcher(p)
	if w.Path() != p {
		t.Errorf("Path = %q", w.Path())
	}
	next := func() (*Config, error) {
		w.mu.Lock()
		w.checked = time.Time{} // as if the recheck time had passed
		w.mu.Unlock()
		return w.Get()
	}
	if c, err := w.Get(); err != nil || len(c.Accounts) != 1 {
		t.Fatalf("first read: %v", err)
	}
	os.WriteFile(p, []byte("[[accounts]]\nname = \"a\"\n[[accounts]]\nname = \"bb\"\n"), 0o600)
	if c, _ := w.Get(); len(c.Accounts) != 1 {
		t.Error("the file was looked at again within the recheck time")
	}
	if c, err := next(); err != nil || len(c.Accounts) != 2 {
		t.Fatalf("after a change: %+v, %v", c, err)
	}
	os.WriteFile(p, []byte("[[accounts]\n"), 0o600)
	if c, err := next(); c != nil || err == nil || !strings.Contains(err.Error(), "cannot be parsed at line") {
		t.Errorf("a broken file: %+v, %v", c, err)
	}
	os.Remove(p)
	if c, err := next(); err != nil || len(c.Accounts) != 0 {
		t.Errorf("a removed file: %+v, %v", c, err)
	}
}

// TestFirstProgramAndLoopback: the program a password command runs first, when it is plain,
// and which hosts are this computer.
func TestFirstProgramAndLoopback(t *testing.T) {
	for cmd, want := range map[string]string{
		"pass show work": "pass", "  gpg -d x": "gpg", "": "", "printf '%s' x": "", "$HOME/bin/pw": "",
		"FOO=1 pw": "", "env pw": "", "cat<file": "",
	} {
		if got := FirstProgram(cmd); got != want {
			t.Errorf("FirstProgram(%q) = %q; want %q", cmd, got, want)
		}
	}
	for host, want := range map[string]bool{"localhost": true, "127.0.0.1": true, "::1": true, "127.8.9.1": true, "example.com": false, "10.0.0.1": false, "": false} {
		if Loopback(host) != want {
			t.Errorf("Loopback(%q) = %v", host, !want)
		}
	}
}
