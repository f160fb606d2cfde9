// Package config reads postern's configuration file (TOML) and the XDG paths
// of its data and state. It never holds or prints a password: an account keeps
// only the command that prints one, and only sync runs it.
package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/BurntSushi/toml"
)

// Config is the configuration file.
type Config struct {
	// SaveDir is the folder mail_attachment_save writes into (empty: the XDG
	// download folder); SaveFolder checks it (savedir.go).
	SaveDir string `toml:"save_dir,omitempty"`
	// TimeZone is the person's zone, an IANA name such as "Europe/Paris", in
	// which agendas are shown (empty: the machine's zone, TZ respected).
	TimeZone string    `toml:"time_zone,omitempty"`
	MCP      MCP       `toml:"mcp"`
	Approval Approval  `toml:"approval"`
	Send     Send      `toml:"send"`
	Notes    Notes     `toml:"notes"`
	Sync     Sync      `toml:"sync"`
	Accounts []Account `toml:"accounts"`
}

// Approval holds how prepare/commit pairs are approved.
type Approval struct {
	// Mode, for a commit that sends or deletes from a client that cannot ask the
	// person in its window: "terminal" (the default: held until the person runs
	// postern approve) or "host" (the host's own prompt for the commit tool is
	// the approval).
	Mode string `toml:"mode,omitempty"`
	// TTL is how long a prepared action's token lives (30s to 15m; default 5m).
	TTL Duration `toml:"ttl,omitempty"`
	// Wait is how long a held commit waits for postern approve (default 5m, at most 30m).
	Wait Duration `toml:"wait,omitempty"`
}

// Duration is a TOML string such as "5m" or "90s".
type Duration struct{ time.Duration }

// UnmarshalText reads a Go duration.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("%q is not a duration such as \"5m\" or \"90s\"", string(b))
	}
	d.Duration = v
	return nil
}

// MarshalText writes it back.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// Limits of the approval settings.
const (
	DefaultHoldWait = 5 * time.Minute
	MaxHoldWait     = 30 * time.Minute
)

// MCP holds the server's settings.
type MCP struct {
	// Scopes granted when postern mcp is started without --scopes.
	Scopes []string `toml:"scopes"`
}

// Account is one mail account.
type Account struct {
	Name        string `toml:"name"`
	Kind        string `toml:"kind"` // a row of the table of kinds (internal/source/kinds)
	Server      string `toml:"server,omitempty"`
	User        string `toml:"user,omitempty"`
	PasswordCmd string `toml:"password_cmd,omitempty"`
	TLS         string `toml:"tls,omitempty"`
	// TLSCA is a PEM file of certificate authorities trusted, besides the
	// system's, for this account's IMAP and SMTP servers (a private CA).
	TLSCA string `toml:"tls_ca,omitempty"`
	Path  string `toml:"path,omitempty"`
	// CalDAV and CardDAV are the URLs of a caldav account's calendars and
	// address books (either or both), where discovery starts.
	CalDAV  string `toml:"caldav,omitempty"`
	CardDAV string `toml:"carddav,omitempty"`
	// DisplayName is the person's name in the From of what they write on this
	// account ("Sam Rivera"); empty: the bare address.
	DisplayName string `toml:"display_name,omitempty"`
	// TrustedAuthServ names the receiving servers whose Authentication-Results
	// are believed (RFC 8601 authserv-id, e.g. "mx.example.com").
	TrustedAuthServ []string `toml:"trusted_authserv_ids,omitempty"`
	// Address is the person's address on this account: the From of what they
	// write. Empty: User, when it is an address.
	Address string `toml:"address,omitempty"`
	// Aliases are their other addresses, never replied to (reply-all).
	Aliases []string `toml:"aliases,omitempty"`
	// SMTP is the submission server (host:port) that sends for this account.
	SMTP    string `toml:"smtp,omitempty"`
	SMTPTLS string `toml:"smtp_tls,omitempty"` // implicit, starttls or none; empty: implicit on 465, else starttls
	// SMTPUser logs in to the SMTP server (empty: User).
	SMTPUser string `toml:"smtp_user,omitempty"`
	// SMTPPasswordCmd prints the SMTP password when it is not the IMAP one
	// (empty: PasswordCmd).
	SMTPPasswordCmd string `toml:"smtp_password_cmd,omitempty"`
	// ArchiveFolder is where mail_move to archive moves mail when the server marks no
	// folder \Archive (RFC 6154).
	ArchiveFolder string `toml:"archive_folder,omitempty"`
	// BackupDays is how long the backups of moves to trash are kept before
	// mail_backups_purge may remove them (0: DefaultBackupDays).
	BackupDays int `toml:"backup_retention_days,omitzero"`
	// Sieve is the ManageSieve server (host:port, RFC 5804) that holds the account's
	// server-side rules (empty: the IMAP host, port 4190). STARTTLS, as for IMAP.
	Sieve string `toml:"sieve,omitempty"`
	// How the account logs in other than by password_cmd (oauth.go): Auth, the OAuth2
	// fields, and Password = "keyring".
	Auth            string   `toml:"auth,omitempty"`
	Password        string   `toml:"password,omitempty"`
	OAuth2TokenCmd  string   `toml:"oauth2_token_cmd,omitempty"`
	OAuth2ClientID  string   `toml:"oauth2_client_id,omitempty"`
	OAuth2AuthURL   string   `toml:"oauth2_auth_url,omitempty"`
	OAuth2TokenURL  string   `toml:"oauth2_token_url,omitempty"`
	OAuth2Scopes    []string `toml:"oauth2_scopes,omitempty"`
	OAuth2Mechanism string   `toml:"oauth2_mechanism,omitempty"`
}

// DefaultBackupDays is how long a backup of deleted mail is kept unless the
// account says otherwise.
const DefaultBackupDays = 30

// BackupRetention is how long the account's backups are kept.
func (a Account) BackupRetention() int {
	if a.BackupDays > 0 {
		return a.BackupDays
	}
	return DefaultBackupDays
}

// BackupDir is where the account's backups of deleted mail are written.
func BackupDir(account string) string { return filepath.Join(DataDir(), "backups", account) }

// From is the account's own address: Address, else User when it is one.
func (a Account) From() string {
	if a.Address != "" {
		return a.Address
	}
	if strings.Contains(a.User, "@") {
		return a.User
	}
	return ""
}

// SMTPSecurity is how the SMTP connection is secured.
func (a Account) SMTPSecurity() string {
	if a.SMTPTLS != "" {
		return a.SMTPTLS
	}
	if strings.HasSuffix(a.SMTP, ":465") {
		return "implicit"
	}
	return "starttls"
}

// DefaultPath is $XDG_CONFIG_HOME/postern/config.toml (~/.config when unset).
func DefaultPath() string {
	return filepath.Join(xdg("XDG_CONFIG_HOME", ".config"), "postern", "config.toml")
}

// DataDir is $XDG_DATA_HOME/postern.
func DataDir() string { return filepath.Join(xdg("XDG_DATA_HOME", ".local/share"), "postern") }

// StateDir is $XDG_STATE_HOME/postern.
func StateDir() string { return filepath.Join(xdg("XDG_STATE_HOME", ".local/state"), "postern") }

func xdg(env, fallback string) string {
	if v := os.Getenv(env); v != "" && filepath.IsAbs(v) {
		return v
	}
	home, err := os.UserHomeDir()
	if err != nil {
		home = os.TempDir()
	}
	return filepath.Join(home, filepath.FromSlash(fallback))
}

// Load reads the file at path. A missing file is an empty configuration; a
// file that cannot be read or parsed is an error that says where.
func Load(path string) (*Config, error) {
	c, err := Parse(path)
	if err != nil {
		return nil, err
	}
	if err := c.check(); err != nil {
		return nil, fmt.Errorf("the configuration %s: %w", path, err)
	}
	return c, nil
}

// Parse reads the file at path as Load does, without the checks Load makes
// of its values: postern config check reports those all at once (Problems).
func Parse(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &Config{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read the configuration %s: %w", path, err)
	}
	var c Config
	md, err := toml.Decode(string(data), &c)
	if err != nil {
		var perr toml.ParseError
		if errors.As(err, &perr) {
			return nil, fmt.Errorf("the configuration %s cannot be parsed at line %d: %s; fix the file and try again", path, perr.Position.Line, perr.Message)
		}
		return nil, fmt.Errorf("the configuration %s cannot be read: %v; fix the file and try again", path, err)
	}
	if undec := md.Undecoded(); len(undec) > 0 {
		keys := make([]string, len(undec))
		for i, k := range undec {
			keys[i] = k.String()
		}
		sort.Strings(keys)
		return nil, fmt.Errorf("the configuration %s has unknown keys (%s); remove or correct them", path, strings.Join(keys, ", "))
	}
	return &c, nil
}

func (c *Config) check() error {
	if ps := c.hardProblems(); len(ps) > 0 {
		return errors.New(ps[0])
	}
	return nil
}

// hardProblems are the values Load refuses, each said in one sentence.
func (c *Config) hardProblems() []string {
	ps := append(c.Send.allowProblems(), c.Sync.problems()...)
	add := func(format string, args ...any) { ps = append(ps, fmt.Sprintf(format, args...)) }
	switch c.Approval.Mode {
	case "", "terminal", "host":
	default:
		add("[approval] mode is %q; use terminal (wait for postern approve) or host (the host's own prompt)", c.Approval.Mode)
	}
	if t := c.Approval.TTL.Duration; t != 0 && (t < 30*time.Second || t > 15*time.Minute) {
		add("[approval] ttl is %v; an approval may last from 30s to 15m", t)
	}
	if w := c.Approval.Wait.Duration; w < 0 || w > MaxHoldWait {
		add("[approval] wait is %v; it may be at most %v", w, MaxHoldWait)
	}
	if c.TimeZone != "" {
		if _, err := time.LoadLocation(c.TimeZone); err != nil || c.TimeZone == "Local" {
			add("time_zone is %q, which is not a time zone name; use one such as Europe/Paris or America/New_York", c.TimeZone)
		}
	}
	seen := map[string]bool{}
	for i, a := range c.Accounts {
		if a.Name == "" {
			add("account %d has no name", i+1)
			continue
		}
		if seen[a.Name] {
			add("account %q is declared twice", a.Name)
		}
		seen[a.Name] = true
		if len(kinds.names) > 0 && kinds.problems[a.Kind] == nil {
			add("account %q has kind %q; use %s", a.Name, a.Kind, orList(kinds.names))
		} else if parse := kinds.parse[a.Kind]; parse != nil {
			if err := parse(a); err != nil {
				add("%v", err)
			}
		}
		ps = append(ps, a.authProblems()...)
		switch a.SMTPTLS {
		case "", "implicit", "starttls", "none":
		default:
			add("account %q has smtp_tls %q; use implicit, starttls or none", a.Name, a.SMTPTLS)
		}
	}
	return ps
}

// kinds are the account kinds postern knows, with the problems of an account of each and how
// each reads an account into its own settings. The table of kinds (internal/source/kinds)
// registers them when it is loaded: config cannot import the kinds' packages, which import
// config. Until then no kind is refused and no kind's problems are looked for.
var kinds struct {
	names    []string
	problems map[string]func(Account) []string
	parse    map[string]func(Account) error
	notices  map[string]func(Account) []string
}

// RegisterKind makes name a kind of account that Load accepts, problems what Problems looks
// for in an account of that kind (sentences without the account's name), parse (the kind's
// settings read from the account; nil: none) what Load refuses in it, in one sentence that
// names the account, and notices (nil: none) what Notices says of it: what postern ignores in
// it, which makes nothing fail. It is called once per kind before any configuration is read.
func RegisterKind(name string, problems func(Account) []string, parse func(Account) error, notices func(Account) []string) {
	if kinds.problems == nil {
		kinds.problems = map[string]func(Account) []string{}
		kinds.parse = map[string]func(Account) error{}
		kinds.notices = map[string]func(Account) []string{}
	}
	if _, ok := kinds.problems[name]; !ok {
		kinds.names = append(kinds.names, name)
		sort.Strings(kinds.names)
	}
	kinds.problems[name] = problems
	kinds.parse[name] = parse
	kinds.notices[name] = notices
}

// Notices are what postern ignores in the configuration (a field an account's kind does not
// read), one sentence each naming the account: nothing fails because of them, and postern
// config check says them without failing.
func (c *Config) Notices() []string {
	var out []string
	for _, a := range c.Accounts {
		if n := kinds.notices[a.Kind]; n != nil {
			for _, x := range n(a) {
				out = append(out, "account "+a.Name+": "+x)
			}
		}
	}
	return out
}

// orList is "a", "a or b", "a, b or c".
func orList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

// Watcher re-reads a configuration file when it changes, so that a server
// running for a day sees today's settings.
type Watcher struct {
	path string

	mu      sync.Mutex
	checked time.Time // when the file was last looked at
	modTime time.Time
	size    int64
	exists  bool
	loaded  bool
	cfg     *Config
	err     error
}

// NewWatcher watches path.
func NewWatcher(path string) *Watcher { return &Watcher{path: path} }

// Path is the watched file.
func (w *Watcher) Path() string { return w.path }

// recheck is how long a looked-at file is trusted before it is looked at again:
// a tool call costs no system call, and a change is seen within this time.
const recheck = 200 * time.Millisecond

// Get returns the current configuration, re-reading the file if it changed.
// When the file cannot be read, the error says why; the configuration is then nil.
func (w *Watcher) Get() (*Config, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := time.Now()
	if w.loaded && now.Sub(w.checked) < recheck {
		return w.cfg, w.err
	}
	w.checked = now
	st, statErr := os.Stat(w.path)
	exists := statErr == nil
	if w.loaded && exists == w.exists && (!exists || (st.ModTime().Equal(w.modTime) && st.Size() == w.size)) {
		return w.cfg, w.err
	}
	w.cfg, w.err = Load(w.path)
	w.loaded, w.exists = true, exists
	if exists {
		w.modTime, w.size = st.ModTime(), st.Size()
	}
	return w.cfg, w.err
}
