// Package caldav is the CalDAV and CardDAV account kind: it finds an account's calendars, task
// lists and address books (RFC 6764 discovery) and syncs their objects into the store, each
// kept byte for byte as the server holds it, and gives the write tools a client whose PUT and
// DELETE are conditional (If-Match, If-None-Match). It never writes during a sync, never sends
// the password over plain http except to this computer, and never keeps, logs or returns it.
package caldav

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os/exec"
	"strings"
	"time"

	"github.com/postern-mcp/postern/internal/config"
	"github.com/postern-mcp/postern/internal/source"
	"github.com/postern-mcp/postern/internal/termsafe"
)

// KindName is the kind of a CalDAV/CardDAV account in the configuration.
const KindName = "caldav"

// noun names an account of the kind in a sentence.
const noun = "a CalDAV/CardDAV account"

// Settings are the fields of the configuration's account that a CalDAV/CardDAV account reads.
type Settings struct {
	Name string `toml:"name"`
	// CalDAV and CardDAV are the URLs where discovery of the calendars and address books
	// starts (either or both).
	CalDAV  string `toml:"caldav"`
	CardDAV string `toml:"carddav"`
	// User and PasswordCmd log in (HTTP Basic, over https unless to this computer).
	User        string `toml:"user"`
	PasswordCmd string `toml:"password_cmd"`
	// TLSCA is a PEM file of certificate authorities trusted besides the system's.
	TLSCA string `toml:"tls_ca"`
}

// SettingsOf is the settings of a configured account; a field of another kind is ignored
// (config.Notices says so).
func SettingsOf(a config.Account) (Settings, error) {
	var s Settings
	err := source.Settle(a, noun, &s)
	return s, err
}

// parse is SettingsOf without its result: the Parse of Kind.
func parse(a config.Account) error {
	_, err := SettingsOf(a)
	return err
}

// Kind is the row of the table of kinds for CalDAV/CardDAV accounts.
var Kind = source.Kind{
	Name:     KindName,
	Noun:     noun,
	Caps:     source.Calendar | source.Tasks | source.Contacts | source.Writes,
	Settings: Settings{},
	Parse:    parse,
	Open:     Open,
	Problems: problems,
	Where:    where,
	Line:     line,
	Synced: func(r source.Result) string {
		return fmt.Sprintf("%d new, %d changed, %d gone, %d calendars and address books", r.New, r.FlagsChanged, r.Deleted, r.Folders)
	},
	Flags: source.Flags{
		List: []source.Flag{
			{Name: "caldav", Usage: "CalDAV URL of your calendars and task lists, or just your provider's https://host/ (found through /.well-known/caldav)"},
			{Name: "carddav", Usage: "CardDAV URL of your address books, or just https://host/ (found through /.well-known/carddav); with or without --caldav"},
			// Shared with IMAP accounts: the same flag, so the same usage.
			{Name: "user", Usage: "user name on the server"},
			{Name: "password-cmd", Usage: `command that prints the password (for example "pass show mail/work"); run at each sync and send, never stored`},
		},
		Naming:   2,
		Synopsis: "--caldav URL [--carddav URL] --user USER --password-cmd CMD",
		Needs:    "--caldav URL (with --user and --password-cmd; --carddav URL for contacts)",
		Foreign: func(flag, account, noun string) error {
			return fmt.Errorf("--%s is for CalDAV/CardDAV accounts, and %s is %s", flag, account, noun)
		},
		Apply:    apply,
		Validate: validate,
		Check:    check,
	},
}

func where(a config.Account) string {
	var hs []string
	for _, u := range []string{a.CalDAV, a.CardDAV} {
		if p, err := url.Parse(u); err == nil && p.Host != "" && !contains(hs, p.Host) {
			hs = append(hs, p.Host)
		}
	}
	return strings.Join(hs, ", ")
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// line is the URLs and the user.
func line(a config.Account) string {
	var parts []string
	if a.CalDAV != "" {
		parts = append(parts, "calendars "+a.CalDAV)
	}
	if a.CardDAV != "" {
		parts = append(parts, "contacts "+a.CardDAV)
	}
	return strings.Join(parts, ", ") + " as " + a.User
}

// problems lists what would make a sync of a fail.
func problems(a config.Account) []string {
	var ps []string
	add := func(format string, args ...any) { ps = append(ps, fmt.Sprintf(format, args...)) }
	set := "postern account set " + a.Name
	if a.CalDAV == "" && a.CardDAV == "" {
		add("no URL; set one with %s --caldav URL or --carddav URL", set)
	}
	for _, x := range []struct{ flag, u string }{{"caldav", a.CalDAV}, {"carddav", a.CardDAV}} {
		if x.u == "" {
			continue
		}
		if _, err := parseURL(x.u); err != nil {
			add("%v; set it with %s --%s URL", strings.TrimSuffix(err.Error(), "."), set, x.flag)
		}
	}
	if a.User == "" {
		add("no user; set one with %s --user USER", set)
	}
	if strings.TrimSpace(a.PasswordCmd) == "" {
		add("no password command; set one with %s --password-cmd CMD", set)
	} else if prog := config.FirstProgram(a.PasswordCmd); prog != "" {
		if _, err := exec.LookPath(prog); err != nil {
			add("the password command runs %s, which is not installed or not on PATH; install it or change it with %s --password-cmd CMD", prog, set)
		}
	}
	return ps
}

// apply sets the fields of a whose flags were given.
func apply(fl source.FlagValues, a *config.Account) error {
	for flag, p := range map[string]*string{"caldav": &a.CalDAV, "carddav": &a.CardDAV, "user": &a.User, "password-cmd": &a.PasswordCmd} {
		if fl.Changed(flag) {
			v, _ := fl.GetString(flag)
			*p = strings.TrimSpace(v)
		}
	}
	return nil
}

// validate says, naming the flag, what is wrong with an account about to be written.
func validate(a config.Account) error {
	if a.CalDAV == "" && a.CardDAV == "" {
		return errors.New("a CalDAV/CardDAV account needs --caldav URL, --carddav URL or both")
	}
	for _, x := range []struct{ flag, u string }{{"caldav", a.CalDAV}, {"carddav", a.CardDAV}} {
		if x.u == "" {
			continue
		}
		if _, err := parseURL(x.u); err != nil {
			return fmt.Errorf("--%s: %w", x.flag, err)
		}
	}
	if a.User == "" || a.PasswordCmd == "" {
		return errors.New("a CalDAV/CardDAV account needs --user and --password-cmd")
	}
	return nil
}

// checkTimeout bounds the whole check.
const checkTimeout = 30 * time.Second

// check logs in and finds the collections, on account add and when account set changes how the
// account logs in or where it looks.
func check(ctx context.Context, old *config.Account, a config.Account, stdout io.Writer) error {
	if old != nil && a.CalDAV == old.CalDAV && a.CardDAV == old.CardDAV && a.User == old.User && a.PasswordCmd == old.PasswordCmd && a.TLSCA == old.TLSCA {
		return nil
	}
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	cal, card, err := Connect(ctx, a)
	if err != nil {
		return err
	}
	var said []string
	for _, x := range []struct {
		c    *Client
		s    service
		noun string
	}{{cal, calDAV, "calendars or task lists"}, {card, cardDAV, "address books"}} {
		if x.c == nil {
			continue
		}
		rs, err := x.c.collections(ctx, x.s)
		if err != nil {
			if errors.Is(err, context.DeadlineExceeded) {
				return fmt.Errorf("%s did not answer within %v", x.c.base.Host, checkTimeout)
			}
			return err
		}
		said = append(said, fmt.Sprintf("%d %s", len(rs), x.noun))
	}
	fmt.Fprintf(stdout, "Checked %s: logged in as %s and found %s.\n", termsafe.Line(where(a)), termsafe.Line(a.User), strings.Join(said, " and "))
	return nil
}
