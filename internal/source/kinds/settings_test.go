package kinds

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/postern-mcp/postern/internal/config"
	"github.com/postern-mcp/postern/internal/source"
)

// load writes text as a configuration file and loads it.
func load(t *testing.T, text string) (*config.Config, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return config.Load(path)
}

// TestFieldOfAnotherKindIsAWarning: a field that only other kinds read (or that no kind reads)
// does not stop a file that loaded before from loading, nor the account from opening; postern
// config check and postern status say, in one sentence naming the account, the field, whose it
// is and the account's kind, that postern ignores it.
func TestFieldOfAnotherKindIsAWarning(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ account, want string }{
		{"name = \"cal\"\nkind = \"caldav\"\ncaldav = \"https://dav.example.com/\"\nuser = \"u\"\npassword_cmd = \"true\"\nserver = \"imap.example.com:993\"\n",
			`account cal: server is a setting of an IMAP account only, not of a CalDAV/CardDAV account, so postern ignores it; remove it from the account`},
		{"name = \"home\"\nkind = \"maildir\"\npath = \"" + dir + "\"\nuser = \"sam\"\n",
			`account home: user is a setting of a CalDAV/CardDAV account or an IMAP account only, not of a Maildir import, so postern ignores it; remove it from the account`},
		{"name = \"days\"\nkind = \"ics\"\npath = \"" + dir + "\"\nsmtp = \"smtp.example.com:465\"\n",
			`account days: smtp is a setting of an IMAP account only, not of a folder of .ics files, so postern ignores it; remove it from the account`},
		{"name = \"days\"\nkind = \"ics\"\npath = \"" + dir + "\"\nbackup_retention_days = 9\n",
			`account days: backup_retention_days is a setting of an IMAP account only, not of a folder of .ics files, so postern ignores it; remove it from the account`},
	} {
		cfg, err := load(t, "[[accounts]]\n"+c.account)
		if err != nil {
			t.Errorf("Load of\n%s refused a file that loaded before: %v", c.account, err)
			continue
		}
		if got := cfg.Notices(); !slices.Contains(got, c.want) {
			t.Errorf("Notices of\n%s= %q\nwant it to hold %q", c.account, got, c.want)
		}
		if _, err := Open(cfg.Accounts[0]); err != nil {
			t.Errorf("Open of an account with an ignored field: %v", err)
		}
	}
}

// TestFieldAccountAddWritesIsAWarning: the fields account add writes for an account of any
// kind (--ca-file, --trust-authserv, --keyring, --oauth2) load as before on a kind that does
// not read them, and postern config check warns that they are ignored.
func TestFieldAccountAddWritesIsAWarning(t *testing.T) {
	dir := t.TempDir()
	cfg, err := load(t, "[[accounts]]\nname = \"days\"\nkind = \"ics\"\npath = \""+dir+"\"\ntrusted_authserv_ids = [\"mx.example.com\"]\npassword = \"keyring\"\naddress = \"sam@example.com\"\n")
	if err != nil {
		t.Fatalf("Load refused a file account add writes: %v", err)
	}
	if ps := cfg.Problems(nil); len(ps) != 0 {
		t.Errorf("a field postern ignores is a problem: %q", ps)
	}
	got := cfg.Notices()
	want := []string{
		"account days: trusted_authserv_ids is a setting of an IMAP account or a Maildir import only, not of a folder of .ics files, so postern ignores it; remove it from the account",
		"account days: password is a setting of an IMAP account only, not of a folder of .ics files, so postern ignores it; remove it from the account",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Notices:\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	if _, err := Open(cfg.Accounts[0]); err != nil {
		t.Errorf("Open of an account with an ignored field: %v", err)
	}
}

// TestSettingsAreTheFilesFields: each kind's settings are fields of the configuration's
// account, with its keys and types, so that SettingsOf copies them; every key of the file but
// the Common ones is some kind's, so that none is refused by every kind.
func TestSettingsAreTheFilesFields(t *testing.T) {
	file := map[string]reflect.Type{}
	at := reflect.TypeOf(config.Account{})
	for i := 0; i < at.NumField(); i++ {
		k, _, _ := strings.Cut(at.Field(i).Tag.Get("toml"), ",")
		file[k] = at.Field(i).Type
	}
	owned := map[string]bool{}
	for _, k := range All() {
		st := reflect.TypeOf(k.Settings)
		if st == nil || st.Kind() != reflect.Struct {
			t.Errorf("kind %s: Settings is %v; want a struct value", k.Name, st)
			continue
		}
		for i := 0; i < st.NumField(); i++ {
			f := st.Field(i)
			key, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
			if ft, ok := file[key]; !ok || ft != f.Type {
				t.Errorf("kind %s: settings field %s has key %q of type %v, which config.Account has not", k.Name, f.Name, key, f.Type)
			}
			owned[key] = true
		}
	}
	for key := range file {
		if !owned[key] && !slices.Contains(source.Common, key) {
			t.Errorf("key %q of the configuration is no kind's setting and not common: every account having it would be refused", key)
		}
	}
}
