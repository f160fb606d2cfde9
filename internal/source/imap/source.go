// Package imap is the IMAP account kind: it syncs an account into the store (folders, flags,
// messages, expunges, renames, UIDVALIDITY changes) and does the remote actions drafts and
// sending need (find a folder by role, append, fetch, remove) and the actions on messages
// (state, flags, move, expunge). One file per operation, as go-imap v2 lays out its client.
// A sync never writes to the server; nothing sends a plain EXPUNGE (it would remove messages
// other mail programs marked deleted); nothing logs a password.
package imap

import (
	"context"
	"crypto/tls"
	"time"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"

	"github.com/postern-mcp/postern/internal/config"
	"github.com/postern-mcp/postern/internal/source"
	"github.com/postern-mcp/postern/internal/store"
)

// Account is what the package needs to reach a server.
type Account struct {
	Name   string
	Server string // host:port
	User   string
	TLS    string // implicit, starttls or none
	// Password returns the password; it is called once per connection.
	Password func(ctx context.Context) (string, error)
	// TLSConfig overrides certificate checks (tests only).
	TLSConfig *tls.Config
	// CAFile is a PEM file of authorities trusted besides the system's (tls_ca).
	CAFile string
	// TrustedAuthServ lists the authserv-ids whose Authentication-Results are believed.
	TrustedAuthServ []string
	// Token, when set, logs in with OAuth2 instead of Password (login.go): it returns an
	// access token, a new one when fresh. Mechanism is oauth2_mechanism ("": by what the
	// server offers).
	Token     func(ctx context.Context, fresh bool) (string, error)
	Mechanism string
	// Fix is what to do when the server refuses even a new token ("authorise it again with …").
	Fix string
}

// FromConfig turns a configured account into what the package needs; the password comes from
// the account's password command, run at each connection. A field of another kind is ignored.
func FromConfig(a config.Account) (Account, error) {
	s, err := SettingsOf(a)
	if err != nil {
		return Account{}, err
	}
	return s.account(), nil
}

// account is what the package needs to reach the server of s.
func (s Settings) account() Account {
	return Account{
		Name: s.Name, Server: s.Server, User: s.User, TLS: s.TLS, TrustedAuthServ: s.TrustedAuthServ, CAFile: s.TLSCA,
		Password: func(ctx context.Context) (string, error) { return source.PasswordOf(ctx, s.Name, s.PasswordCmd) },
	}.withAuth(s)
}

// Source is an IMAP account as the table of kinds opens it.
type Source struct{ a Account }

// New returns the Source of a.
func New(a Account) *Source { return &Source{a: a} }

// Open is the Source of a configured account: the Open of Kind.
func Open(a config.Account) (source.Source, error) {
	acct, err := FromConfig(a)
	if err != nil {
		return nil, err
	}
	return New(acct), nil
}

// Sync brings the store's copy of the account up to date.
func (s *Source) Sync(ctx context.Context, st *store.Store, opt source.Options) (*source.Result, error) {
	return Sync(ctx, st, s.a, opt)
}

// Connect logs in for remote actions.
func (s *Source) Connect(ctx context.Context) (source.Session, error) {
	c, err := Dial(ctx, s.a)
	if err != nil {
		return nil, err
	}
	return &session{c: c}, nil
}

// session is one logged-in connection, for the actions of one tool call.
type session struct{ c *imapclient.Client }

var _ source.Session = (*session)(nil)

func (s *session) FindRole(ctx context.Context, role string) (string, error) {
	return FindRole(ctx, s.c, role)
}

func (s *session) Append(ctx context.Context, folder string, flags int, date time.Time, raw []byte) error {
	_, err := Append(ctx, s.c, folder, imapFlags(flags), date, raw)
	return err
}

func (s *session) Fetch(ctx context.Context, folder string, uid uint32) ([]byte, error) {
	return Fetch(ctx, s.c, folder, imap.UID(uid))
}

func (s *session) Remove(ctx context.Context, folder, messageID string) (int, error) {
	return RemoveByMessageID(ctx, s.c, folder, messageID)
}

func (s *session) RoleFolder(ctx context.Context, role string) (string, bool, error) {
	return RoleFolder(ctx, s.c, role)
}

func (s *session) State(ctx context.Context, folder string, uidValidity uint32, uids []uint32) (map[uint32]source.MessageState, error) {
	return State(ctx, s.c, folder, uidValidity, uids)
}

func (s *session) SetFlags(ctx context.Context, folder string, uidValidity uint32, uids []uint32, add, remove []string, unchangedSince uint64) (source.Flagged, error) {
	return SetFlags(ctx, s.c, folder, uidValidity, uids, add, remove, unchangedSince)
}

func (s *session) Move(ctx context.Context, folder string, uidValidity uint32, uids []uint32, dest string) (source.Moved, error) {
	return Move(ctx, s.c, folder, uidValidity, uids, dest)
}

func (s *session) Expunge(ctx context.Context, folder string, uidValidity uint32, uids []uint32) (int, error) {
	return Expunge(ctx, s.c, folder, uidValidity, uids)
}

// Close sends LOGOUT without waiting for the server's answer.
func (s *session) Close() { s.c.Logout() }

// imapFlags is the IMAP system flags of the store's flag bits.
func imapFlags(bits int) []imap.Flag {
	var out []imap.Flag
	for _, f := range []struct {
		bit  int
		flag imap.Flag
	}{{store.FlagDraft, imap.FlagDraft}, {store.FlagSeen, imap.FlagSeen}, {store.FlagFlagged, imap.FlagFlagged}, {store.FlagAnswered, imap.FlagAnswered}, {store.FlagDeleted, imap.FlagDeleted}} {
		if bits&f.bit != 0 {
			out = append(out, f.flag)
		}
	}
	return out
}
