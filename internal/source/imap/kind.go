package imap

import (
	"context"
	"fmt"
	"io"
	"net"
	"os/exec"
	"strings"

	"github.com/postern-mcp/postern/internal/config"
	"github.com/postern-mcp/postern/internal/source"
)

// KindName is the kind of an IMAP account in the configuration.
const KindName = "imap"

// Kind is the row of the table of kinds for IMAP accounts.
var Kind = source.Kind{
	Name:     KindName,
	Noun:     noun,
	Caps:     source.Mail | source.Writes | source.Scripts | source.OAuth,
	Settings: Settings{},
	Parse:    parse,
	Open:     Open,
	Problems: problems,
	Where:    func(a config.Account) string { return a.Server },
	Line:     line,
	Flags: source.Flags{
		List: append([]source.Flag{
			{Name: "imap", Usage: "IMAP server as HOST:PORT (993: implicit TLS; 143: STARTTLS)"},
			{Name: "user", Usage: "user name on the server"},
			{Name: "password-cmd", Usage: `command that prints the password (for example "pass show mail/work"); run at each sync and send, never stored`},
			{Name: "tls", Usage: "implicit, starttls or none (none only to this computer); default: starttls on ports 143 and 587, else implicit", Values: []string{"implicit", "starttls", "none"}},
			{Name: "smtp", Usage: "SMTP submission server as HOST:PORT (465: implicit TLS; 587: STARTTLS)"},
			{Name: "smtp-tls", Usage: "implicit, starttls or none (only to this computer); default: implicit on port 465, else starttls", Values: []string{"implicit", "starttls", "none"}},
			{Name: "smtp-user", Usage: "SMTP user name (default: --user)"},
			{Name: "smtp-password-cmd", Usage: "command that prints the SMTP password, when it is not the IMAP one"},
		}, AuthFlags...),
		Synopsis: "--imap HOST:PORT --user USER --password-cmd CMD",
		Needs:    "--imap HOST:PORT (with --user and --password-cmd)",
		Foreign: func(flag, account, noun string) error {
			return fmt.Errorf("--%s is for IMAP accounts, and %s is %s (sending needs IMAP: the sent copy is saved there)", flag, account, noun)
		},
		Apply:    apply,
		Validate: validate,
		Check:    check,
		Added:    added,
		Changed:  changed,
	},
}

// problems lists what would make a sync or a send of a fail.
func problems(a config.Account) []string {
	var ps []string
	add := func(format string, args ...any) { ps = append(ps, fmt.Sprintf(format, args...)) }
	set := "postern account set " + a.Name
	host, port, err := net.SplitHostPort(a.Server)
	if err != nil || host == "" || port == "" {
		add("server %q is not HOST:PORT; set it with %s --imap HOST:PORT", a.Server, set)
	}
	if a.User == "" {
		add("no user; set one with %s --user USER", set)
	}
	if a.OAuth2() || a.KeyringPassword() {
		ps = append(ps, authProblems(a)...)
	} else if strings.TrimSpace(a.PasswordCmd) == "" {
		add("no password command; set one with %s --password-cmd CMD", set)
	} else if prog := config.FirstProgram(a.PasswordCmd); prog != "" {
		if _, err := exec.LookPath(prog); err != nil {
			add("the password command runs %s, which is not installed or not on PATH; install it or change it with %s --password-cmd CMD", prog, set)
		}
	}
	switch a.TLS {
	case "", "implicit", "starttls":
	case "none":
		if host != "" && !config.Loopback(host) {
			add("tls is none to %s, which would send the password in clear; use implicit or starttls (%s --tls starttls)", host, set)
		}
	default:
		add("tls is %q; use implicit, starttls or none (%s --tls implicit)", a.TLS, set)
	}
	if a.SMTP != "" {
		h, p, err := net.SplitHostPort(a.SMTP)
		if err != nil || h == "" || p == "" {
			add("smtp %q is not HOST:PORT; set it with %s --smtp HOST:PORT", a.SMTP, set)
		} else if a.SMTPSecurity() == "none" && !config.Loopback(h) {
			add("smtp_tls is none to %s, which would send the password in clear; use implicit or starttls", h)
		}
	}
	return ps
}

// line is the server, the user, the TLS and how the account sends.
func line(a config.Account) string {
	l := a.Server + " as " + a.User + " (tls " + a.TLS + authWord(a) + ")"
	if a.SMTP != "" {
		l += ", sends via " + a.SMTP + " (" + a.SMTPSecurity() + ")"
	}
	return l
}

// defaultTLS is how an IMAP server is reached when --tls is not given: STARTTLS on
// the ports that speak plain first (143, and 587 for servers set up that way), else
// implicit TLS (993).
func defaultTLS(server string) string {
	_, port, _ := net.SplitHostPort(server)
	if port == "143" || port == "587" {
		return "starttls"
	}
	return "implicit"
}

// apply sets the fields of a whose flags were given.
func apply(fl source.FlagValues, a *config.Account) error {
	given := fl.Changed
	value := func(flag string) string { v, _ := fl.GetString(flag); return v }
	if given("imap") {
		server := value("imap")
		if !given("tls") && (a.TLS == "" || a.TLS == defaultTLS(a.Server)) {
			a.TLS = defaultTLS(server)
		}
		a.Server = server
	}
	if err := ApplyAuth(fl, a); err != nil {
		return err
	}
	for flag, p := range map[string]*string{
		"user": &a.User, "password-cmd": &a.PasswordCmd, "tls": &a.TLS, "smtp": &a.SMTP,
		"smtp-tls": &a.SMTPTLS, "smtp-user": &a.SMTPUser, "smtp-password-cmd": &a.SMTPPasswordCmd,
	} {
		if given(flag) {
			*p = value(flag)
		}
	}
	return nil
}

// validate says, naming the flag, what is wrong with an IMAP account about to be written.
func validate(a config.Account) error {
	host, port, err := net.SplitHostPort(a.Server)
	if err != nil || host == "" || port == "" {
		return fmt.Errorf("--imap %q must be HOST:PORT, such as imap.example.com:993", a.Server)
	}
	if a.User == "" || !a.HasSecret() {
		return fmt.Errorf("an IMAP account needs --user and --password-cmd (or --keyring, --oauth2 or --oauth2-token-cmd)")
	}
	if err := ValidateAuth(a); err != nil {
		return err
	}
	switch a.TLS {
	case "implicit", "starttls":
	case "none":
		if !config.Loopback(host) {
			return fmt.Errorf("--tls none sends your password in clear; it is only allowed to this computer (127.0.0.1, ::1, localhost)")
		}
	default:
		return fmt.Errorf("--tls must be implicit, starttls or none, not %q", a.TLS)
	}
	if a.SMTP != "" {
		host, port, err := net.SplitHostPort(a.SMTP)
		if err != nil || host == "" || port == "" {
			return fmt.Errorf("--smtp %q must be HOST:PORT, such as smtp.example.com:465", a.SMTP)
		}
		switch a.SMTPTLS {
		case "", "implicit", "starttls":
		case "none":
			if !config.Loopback(host) {
				return fmt.Errorf("--smtp-tls none sends your password in clear; it is only allowed to this computer (127.0.0.1, ::1, localhost)")
			}
		default:
			return fmt.Errorf("--smtp-tls must be implicit, starttls or none, not %q", a.SMTPTLS)
		}
	} else if a.SMTPTLS != "" || a.SMTPUser != "" || a.SMTPPasswordCmd != "" {
		return fmt.Errorf("--smtp-tls, --smtp-user and --smtp-password-cmd need --smtp HOST:PORT")
	}
	return nil
}

// check logs in and lists the folders, on account add and when account set changes how the
// account logs in.
func check(ctx context.Context, old *config.Account, a config.Account, stdout io.Writer) error {
	if old != nil && a.Server == old.Server && a.User == old.User && a.PasswordCmd == old.PasswordCmd && a.TLS == old.TLS && a.TLSCA == old.TLSCA && sameAuth(*old, a) {
		return nil
	}
	return checkAccount(ctx, a, stdout)
}

// added says which TLS account add chose, and why when it was not given.
func added(a config.Account, fl source.FlagValues) string {
	how := ", tls " + a.TLS
	if !fl.Changed("tls") {
		_, port, _ := net.SplitHostPort(a.Server)
		how += " (the default for port " + port + "; change it with --tls)"
	}
	return how
}

// changed says when a new port changed the TLS that was not given.
func changed(old, a config.Account, fl source.FlagValues) string {
	if a.TLS != old.TLS && !fl.Changed("tls") {
		return fmt.Sprintf(" tls is now %s, the default for the new port.", a.TLS)
	}
	return ""
}
