package mail

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"mime"
	"net/mail"
	"sort"
	"strings"
	"time"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/compose"
	"github.com/postern-mcp/postern/internal/config"
	"github.com/postern-mcp/postern/internal/outbox"
	"github.com/postern-mcp/postern/internal/source"
	"github.com/postern-mcp/postern/internal/source/kinds"
	"github.com/postern-mcp/postern/internal/store"
)

// The handlers of this file only compute actions; the dispatcher runs an
// action's Run after the commit's token (and, for a send, the person) agree.

// MailDraft implements mail_draft and mail_draft_commit.
func (s *Mail) MailDraft(ctx context.Context, a *generated.MailDraftArgs) (*generated.Action, error) {
	return s.messageAction(ctx, a, "draft", "save a draft in the Drafts folder",
		func(ctx context.Context, acct config.Account, m compose.Message) (any, error) {
			return s.saveDraft(ctx, acct, m)
		})
}

// MailSend implements mail_send and mail_send_commit: a new message, a reply or a
// forward built from the arguments, or, with draft, a draft saved in the Drafts folder
// sent exactly as it is.
func (s *Mail) MailSend(ctx context.Context, a *generated.MailSendArgs) (*generated.Action, error) {
	if a.Draft {
		return s.sendDraftAction(ctx, a)
	}
	if a.Body == nil {
		return nil, errors.New("body is missing: give your text in body (only draft: true sends without one)")
	}
	d := generated.MailDraftArgs{ID: a.ID, ReplyAll: a.ReplyAll, Forward: a.Forward, To: a.To, Cc: a.Cc, Bcc: a.Bcc,
		Subject: a.Subject, Body: *a.Body, Account: a.Account}
	return s.messageAction(ctx, &d, "send", "send a message",
		func(ctx context.Context, acct config.Account, m compose.Message) (any, error) {
			return s.Send(ctx, acct, m)
		})
}

// messageAction builds the message the arguments describe and the action
// that run does with it; kind tells a draft's payload from a send's.
func (s *Mail) messageAction(ctx context.Context, a *generated.MailDraftArgs, kind, what string, run func(context.Context, config.Account, compose.Message) (any, error)) (*generated.Action, error) {
	acct, m, err := s.compose(ctx, a, kind == "send")
	if err != nil {
		return nil, err
	}
	return &generated.Action{
		Account: acct.Name,
		Preview: Preview(m, what),
		Payload: struct {
			Kind    string
			Message any
		}{kind, m.Normalized()},
		Run: func(ctx context.Context) (any, error) { return run(ctx, acct, m) },
	}, nil
}

// sendDraftAction is mail_send with draft: the saved draft id, sent as it is. Every other
// argument would change a message the person already reviewed, so any is refused.
func (s *Mail) sendDraftAction(ctx context.Context, a *generated.MailSendArgs) (*generated.Action, error) {
	if a.ID == nil {
		return nil, errors.New("draft: true sends the saved draft named by id; give its message id in id")
	}
	var extra []string
	for name, given := range map[string]bool{"reply_all": a.ReplyAll, "forward": a.Forward, "to": a.To != nil, "cc": a.Cc != nil,
		"bcc": a.Bcc != nil, "subject": a.Subject != nil, "body": a.Body != nil, "account": a.Account != nil} {
		if given {
			extra = append(extra, name)
		}
	}
	if len(extra) > 0 {
		sort.Strings(extra)
		return nil, fmt.Errorf("draft: true sends the saved draft exactly as it is, so it takes only id; leave out %s, or save a new draft with %s", strings.Join(extra, ", "), generated.ToolMailDraft)
	}
	id := *a.ID
	st, r, err := s.Message(ctx, id)
	if err != nil {
		return nil, err
	}
	acct, err := s.SendingAccount(ctx, r.Account, true)
	if err != nil {
		return nil, err
	}
	if role, err := folderRole(ctx, st, r.Account, r.Folder); err != nil {
		return nil, err
	} else if role != "drafts" {
		return nil, fmt.Errorf("message %s is in %s, not in the Drafts folder; only a saved draft can be sent with draft: true", id, r.Folder)
	}
	raw, err := fetchRaw(ctx, acct, r)
	if err != nil {
		return nil, err
	}
	d, err := readDraft(raw, OwnAddresses(acct))
	if err != nil {
		return nil, err
	}
	if err := s.CheckRecipients(d.rcpts); err != nil {
		return nil, err
	}
	if acc, err := s.Access(ctx); err != nil {
		return nil, err
	} else if err := acc.RefuseMail(ctx, st, r.ThreadID, d.rcpts); err != nil {
		return nil, err
	}
	sum := sha256.Sum256(raw)
	p := &generated.Prepared{
		Action: "send the saved draft " + id, From: d.from, To: d.to, Cc: d.cc, Bcc: d.bcc,
		Subject: d.subject, InReplyTo: d.inReplyTo, BodyDigest: "sha256:" + hex.EncodeToString(sum[:]),
	}
	if b, err := st.Body(ctx, r.ID); err == nil {
		p.BodyLines = compose.FirstLines(b.Text) // decoded, as synced
	}
	n := len(raw)
	p.BodyLength = &n
	return &generated.Action{
		Account: acct.Name,
		Preview: p,
		Payload: struct {
			Kind, Folder, MessageID string
			UID                     uint32
			Raw                     string
		}{"send_draft", r.Folder, r.MessageID, r.UID, hex.EncodeToString(sum[:])},
		Run: func(ctx context.Context) (any, error) { return s.sendDraft(ctx, acct, r, sum) },
	}, nil
}

// compose checks the arguments of mail_draft or mail_send and builds the message.
func (s *Mail) compose(ctx context.Context, a *generated.MailDraftArgs, sending bool) (config.Account, compose.Message, error) {
	var m compose.Message
	if a.ReplyAll && a.Forward {
		return config.Account{}, m, errors.New("give reply_all or forward, not both: a forward goes only to the recipients in to")
	}
	if a.ID == nil && (a.ReplyAll || a.Forward) {
		return config.Account{}, m, errors.New("reply_all and forward need id, the message to reply to or forward")
	}
	to, err := compose.ParseList("to", a.To)
	if err != nil {
		return config.Account{}, m, err
	}
	cc, err := compose.ParseList("cc", a.Cc)
	if err != nil {
		return config.Account{}, m, err
	}
	bcc, err := compose.ParseList("bcc", a.Bcc)
	if err != nil {
		return config.Account{}, m, err
	}
	if a.Subject != nil {
		if err := compose.CheckSubject(*a.Subject); err != nil {
			return config.Account{}, m, err
		}
	}
	if err := compose.CheckBody(a.Body); err != nil {
		return config.Account{}, m, err
	}
	origID := ""
	if a.ID != nil {
		origID = *a.ID
	}
	var orig *compose.Original
	accountName := ""
	if a.Account != nil {
		accountName = *a.Account
	}
	if a.ID != nil {
		o, account, err := s.Original(ctx, origID)
		if err != nil {
			return config.Account{}, m, err
		}
		if accountName != "" && accountName != account {
			return config.Account{}, m, fmt.Errorf("message %s belongs to account %s; a reply or forward goes from that account, so leave account out or give %s", origID, account, account)
		}
		orig, accountName = o, account
	}
	acct, err := s.SendingAccount(ctx, accountName, sending)
	if err != nil {
		return config.Account{}, m, err
	}
	own := OwnAddresses(acct)
	switch {
	case orig != nil && !a.Forward:
		m, err = compose.Reply(*orig, own, a.ReplyAll, a.Body, to, cc)
	case orig != nil:
		if len(to) == 0 {
			return acct, m, errors.New("a forward needs its recipients in to")
		}
		m, err = compose.Forward(*orig, own[0], to, cc, a.Body)
	default:
		if a.Subject == nil {
			return acct, m, errors.New("a new message needs a subject")
		}
		if len(to)+len(cc)+len(bcc) == 0 {
			return acct, m, errors.New("a new message needs at least one recipient in to, cc or bcc")
		}
		m = compose.Message{From: own[0], To: to, Cc: cc, Body: a.Body}
	}
	if err != nil {
		return acct, m, err
	}
	m.Bcc = bcc
	if a.Subject != nil {
		m.Subject = *a.Subject
	}
	if sending {
		if err := s.CheckRecipients(m.Recipients()); err != nil {
			return acct, m, err
		}
	}
	if err := s.refuseProjectMail(ctx, origID, m.Recipients()); err != nil {
		return acct, m, err
	}
	return acct, m, nil
}

// refuseProjectMail refuses a message that would write into a project closed to agents
// (kit.Access.RefuseMail): origID is the message it answers or forwards, or "".
func (s *Mail) refuseProjectMail(ctx context.Context, origID string, recipients []string) error {
	acc, err := s.Access(ctx)
	if err != nil || !acc.Active() {
		return err
	}
	st, err := s.Store(ctx)
	if err != nil {
		return err
	}
	var thread int64
	if origID != "" {
		_, r, err := s.Message(ctx, origID)
		if err != nil {
			return err
		}
		thread = r.ThreadID
	}
	return acc.RefuseMail(ctx, st, thread, recipients)
}

// CheckRecipients refuses a send to any recipient the configuration's [send]
// allow leaves out, before anything is previewed or prepared.
func (s *Mail) CheckRecipients(addrs []string) error {
	cfg, err := s.Config.Get()
	if err != nil {
		return err
	}
	return cfg.CheckRecipients(addrs)
}

// Original reads a message of the store as compose needs it.
func (s *Mail) Original(ctx context.Context, id string) (*compose.Original, string, error) {
	st, r, err := s.Message(ctx, id)
	if err != nil {
		return nil, "", err
	}
	o := &compose.Original{MessageID: r.MessageID, InReplyTo: r.InReplyTo, Subject: r.Subject, Date: r.Date}
	o.From = storeAddrs([]store.Address{r.From})
	o.To, o.Cc = storeAddrs(r.To), storeAddrs(r.Cc)
	if refs, err := st.Refs(ctx, r.ID); err == nil {
		o.References = refs
	}
	if b, err := st.Body(ctx, r.ID); err == nil {
		if r.Withheld == "" {
			o.Text = b.Text
		} else {
			o.Text = "[The text is not quoted: " + r.Withheld + ".]"
		}
		for _, h := range b.Headers {
			if strings.EqualFold(h.Name, "Reply-To") {
				if l, err := mail.ParseAddressList(h.Value); err == nil {
					for _, x := range l {
						o.ReplyTo = append(o.ReplyTo, compose.Address{Name: x.Name, Addr: x.Address})
					}
				}
			}
		}
	}
	return o, r.Account, nil
}

func storeAddrs(as []store.Address) []compose.Address {
	var out []compose.Address
	for _, a := range as {
		if a.Email != "" {
			out = append(out, compose.Address{Name: a.Name, Addr: a.Email})
		}
	}
	return out
}

// SendingAccount returns the IMAP account a message is written from: the one
// named, or the only visible IMAP account. Sending also needs its SMTP server.
func (s *Mail) SendingAccount(ctx context.Context, name string, sending bool) (config.Account, error) {
	accts, err := s.Visible(ctx)
	if err != nil {
		return config.Account{}, err
	}
	var imapAccts []config.Account
	for _, a := range accts {
		if Writable(a) {
			imapAccts = append(imapAccts, a)
		}
	}
	var acct config.Account
	switch {
	case name != "":
		found := false
		for _, a := range accts {
			if a.Name == name {
				acct, found = a, true
			}
		}
		if !found {
			return acct, fmt.Errorf("there is no account %q here; call accounts for the names", name)
		}
		if !Writable(acct) {
			return acct, fmt.Errorf("account %s is a read-only %s import; drafts and sending need an IMAP account", acct.Name, acct.Kind)
		}
	case len(imapAccts) == 1:
		acct = imapAccts[0]
	case len(imapAccts) == 0:
		return acct, errors.New("no IMAP account is configured; drafts and sending need one (postern account add NAME --imap …)")
	default:
		names := make([]string, len(imapAccts))
		for i, a := range imapAccts {
			names[i] = a.Name
		}
		return acct, fmt.Errorf("several accounts could write this (%s); say which with account", strings.Join(names, ", "))
	}
	if acct.From() == "" {
		return acct, fmt.Errorf("account %s has no address of its own to write from; the person can set one with postern account add … --address", acct.Name)
	}
	if sending && acct.SMTP == "" {
		return acct, fmt.Errorf("account %s has no SMTP server to send with; the person can add one with postern account add … --smtp HOST:PORT", acct.Name)
	}
	return acct, nil
}

func OwnAddresses(a config.Account) []compose.Address {
	own := []compose.Address{{Name: a.DisplayName, Addr: a.From()}}
	for _, al := range a.Aliases {
		own = append(own, compose.Address{Addr: al})
	}
	if a.User != a.From() && strings.Contains(a.User, "@") {
		own = append(own, compose.Address{Addr: a.User})
	}
	return own
}

func Preview(m compose.Message, action string) *generated.Prepared {
	pv := m.Preview()
	p := &generated.Prepared{
		Action: action, Subject: pv.Subject, InReplyTo: pv.InReplyTo,
		To: pv.To, Cc: pv.Cc, Bcc: pv.Bcc, BodyLines: pv.BodyLines, BodyDigest: pv.Digest,
	}
	if len(pv.From) > 0 {
		p.From = pv.From[0]
	}
	n := pv.BodyLength
	p.BodyLength = &n
	return p
}

// Connect logs in to the server of an account whose kind has remote actions.
// Writable says whether the account's kind acts on a server (source.Remote): only such an account
// can hold drafts and write sent copies.
func Writable(acct config.Account) bool {
	src, err := kinds.Open(acct)
	if err != nil {
		return false
	}
	_, ok := src.(source.Remote)
	return ok
}

func Connect(ctx context.Context, acct config.Account) (source.Session, error) {
	src, err := kinds.Open(acct)
	if err != nil {
		return nil, err
	}
	r, ok := src.(source.Remote)
	if !ok {
		return nil, fmt.Errorf("account %s is a read-only %s import; drafts and sending need an IMAP account", acct.Name, acct.Kind)
	}
	return r.Connect(ctx)
}

func (s *Mail) saveDraft(ctx context.Context, acct config.Account, m compose.Message) (*generated.DraftResult, error) {
	m.Date = time.Now()
	m.MessageID = compose.NewMessageID(m.From)
	raw, err := m.Bytes(true)
	if err != nil {
		return nil, err
	}
	c, err := Connect(ctx, acct)
	if err != nil {
		return nil, fmt.Errorf("the draft was not saved: %w", err)
	}
	defer c.Close()
	folder, err := c.FindRole(ctx, source.RoleDrafts)
	if err != nil {
		return nil, fmt.Errorf("the draft was not saved: %w", err)
	}
	if err := c.Append(ctx, folder, store.FlagDraft|store.FlagSeen, m.Date, raw); err != nil {
		return nil, fmt.Errorf("the draft was not saved: %w", err)
	}
	pv := m.Preview()
	return &generated.DraftResult{
		Account: acct.Name, Folder: folder, MessageID: m.MessageID, Subject: m.Subject,
		To: pv.To, Cc: pv.Cc, Bcc: pv.Bcc, InReplyTo: m.InReplyTo,
	}, nil
}

// UnknownOutcome is a send whose result cannot be known; it is never retried.
type UnknownOutcome struct{ error }

func (UnknownOutcome) Unknown() bool { return true }

// Unknown is err as a failure whose outcome is unknown: the server may have done it.
func Unknown(err error) error { return UnknownOutcome{err} }

func smtpAccount(acct config.Account) outbox.SMTPAccount {
	pwAcct := acct
	if acct.SMTPPasswordCmd != "" {
		pwAcct.PasswordCmd = acct.SMTPPasswordCmd
	}
	user := acct.SMTPUser
	if user == "" {
		user = acct.User
	}
	return outbox.WithAuth(acct, outbox.SMTPAccount{
		Name: acct.Name, Server: acct.SMTP, TLS: acct.SMTPSecurity(), User: user, CAFile: acct.TLSCA,
		Password: func(ctx context.Context) (string, error) { return source.Password(ctx, pwAcct) },
	})
}

// Submit hands raw to the account's SMTP server and says what happened in
// words a person can act on.
func Submit(ctx context.Context, acct config.Account, from string, rcpts []string, raw []byte) error {
	err := outbox.Send(ctx, smtpAccount(acct), from, rcpts, raw)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, outbox.ErrUnknown):
		return UnknownOutcome{fmt.Errorf("the outcome is unknown: %v. The message may or may not have been sent; postern will not retry. Check the Sent folder or ask a recipient before sending again", err)}
	default:
		return fmt.Errorf("nothing was sent: %w", err)
	}
}

func (s *Mail) Send(ctx context.Context, acct config.Account, m compose.Message) (*generated.SendResult, error) {
	m.Date = time.Now()
	m.MessageID = compose.NewMessageID(m.From)
	wire, err := m.Bytes(false)
	if err != nil {
		return nil, fmt.Errorf("nothing was sent: %w", err)
	}
	copyRaw, err := m.Bytes(true)
	if err != nil {
		return nil, fmt.Errorf("nothing was sent: %w", err)
	}
	rcpts := m.Recipients()
	if err := s.CheckRecipients(rcpts); err != nil { // [send] allow may have narrowed since the prepare
		return nil, err
	}
	if err := Submit(ctx, acct, m.From.Addr, rcpts, wire); err != nil {
		return nil, err
	}
	res := &generated.SendResult{Outcome: "sent", Account: acct.Name, MessageID: m.MessageID, Recipients: rcpts}
	s.KeepSentCopy(ctx, acct, m.Date, copyRaw, res, nil)
	return res, nil
}

// KeepSentCopy saves the sent message in Sent and, for a draft, removes the
// draft; what fails here is a warning, since the message is already sent.
func (s *Mail) KeepSentCopy(ctx context.Context, acct config.Account, date time.Time, raw []byte, res *generated.SendResult, draft *store.Row) {
	var warns []string
	c, err := Connect(ctx, acct)
	if err != nil {
		res.Warning = "the message was sent, but no copy was saved in Sent: " + err.Error()
		return
	}
	defer c.Close()
	if folder, err := c.FindRole(ctx, source.RoleSent); err != nil {
		warns = append(warns, "no copy was saved in Sent: "+err.Error())
	} else if err := c.Append(ctx, folder, store.FlagSeen, date, raw); err != nil {
		warns = append(warns, "no copy was saved in "+folder+": "+err.Error())
	} else {
		res.SentCopy = folder
	}
	if draft != nil {
		if n, err := c.Remove(ctx, draft.Folder, draft.MessageID); err != nil || n == 0 {
			why := "it was not found"
			if err != nil {
				why = err.Error()
			}
			warns = append(warns, "the draft was not removed from "+draft.Folder+": "+why)
		}
	}
	if len(warns) > 0 {
		res.Warning = "The message was sent, but " + strings.Join(warns, "; ")
	}
}

func (s *Mail) sendDraft(ctx context.Context, acct config.Account, r *store.Row, sum [32]byte) (*generated.SendResult, error) {
	raw, err := fetchRaw(ctx, acct, r)
	if err != nil {
		return nil, fmt.Errorf("nothing was sent: %w", err)
	}
	if sha256.Sum256(raw) != sum {
		return nil, errors.New("nothing was sent: the draft changed on the server since it was prepared; sync, look at it again and prepare anew")
	}
	d, err := readDraft(raw, OwnAddresses(acct))
	if err != nil {
		return nil, fmt.Errorf("nothing was sent: %w", err)
	}
	if err := s.CheckRecipients(d.rcpts); err != nil {
		return nil, err
	}
	if err := Submit(ctx, acct, d.fromAddr, d.rcpts, withoutHeader(raw, "Bcc")); err != nil {
		return nil, err
	}
	res := &generated.SendResult{Outcome: "sent", Account: acct.Name, MessageID: r.MessageID, Recipients: d.rcpts}
	s.KeepSentCopy(ctx, acct, time.Now(), raw, res, r)
	return res, nil
}

// folderRole is the role of an account's folder as the last sync saw it.
func folderRole(ctx context.Context, st *store.Store, account, folder string) (string, error) {
	stats, err := st.FolderStats(ctx, []string{account}, nil)
	if err != nil {
		return "", err
	}
	for _, f := range stats {
		if f.Account == account && f.Name == folder {
			return f.Role, nil
		}
	}
	return "", nil
}

// fetchRaw reads a message's exact bytes from its IMAP folder, checking that
// the UID still holds the message the store knows.
func fetchRaw(ctx context.Context, acct config.Account, r *store.Row) ([]byte, error) {
	c, err := Connect(ctx, acct)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	raw, err := c.Fetch(ctx, r.Folder, r.UID)
	var re *source.ReadError
	switch {
	case errors.As(err, &re):
		return nil, fmt.Errorf("cannot read the draft from the server (%v); try again", re.Err)
	case errors.Is(err, source.ErrGone):
		return nil, errors.New("the draft is no longer on the server; sync and look again")
	case errors.Is(err, source.ErrEmpty):
		return nil, errors.New("the server sent no content for the draft; try again")
	case err != nil:
		return nil, err
	}
	if m, err := mail.ReadMessage(bytes.NewReader(raw)); err != nil || strings.Trim(m.Header.Get("Message-Id"), "<> ") != r.MessageID {
		return nil, errors.New("the draft on the server is not the one synced; sync and look again")
	}
	return raw, nil
}

type draftInfo struct {
	from, fromAddr, subject, inReplyTo string
	to, cc, bcc, rcpts                 []string
}

// readDraft reads what a saved draft would do: its sender (one of the
// account's own addresses), its recipients and its subject.
func readDraft(raw []byte, own []compose.Address) (*draftInfo, error) {
	m, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("the draft cannot be read as a message (%v); open it in a mail program", err)
	}
	h := m.Header
	d := &draftInfo{subject: h.Get("Subject"), inReplyTo: strings.Trim(h.Get("In-Reply-To"), "<> ")}
	if dec, err := new(mime.WordDecoder).DecodeHeader(d.subject); err == nil {
		d.subject = dec
	}
	from, err := mail.ParseAddressList(h.Get("From"))
	if err != nil || len(from) != 1 {
		return nil, errors.New("the draft has no single From address; fix it in a mail program")
	}
	isOwn := false
	for _, o := range own {
		if strings.EqualFold(o.Addr, from[0].Address) {
			isOwn = true
		}
	}
	if !isOwn {
		return nil, fmt.Errorf("the draft's From (%s) is not one of this account's addresses; postern sends only as the account", from[0].Address)
	}
	d.from, d.fromAddr = from[0].String(), from[0].Address
	seen := map[string]bool{}
	for _, f := range []struct {
		name string
		dst  *[]string
	}{{"To", &d.to}, {"Cc", &d.cc}, {"Bcc", &d.bcc}} {
		if h.Get(f.name) == "" {
			continue
		}
		l, err := mail.ParseAddressList(h.Get(f.name))
		if err != nil {
			return nil, fmt.Errorf("the draft's %s cannot be read (%v); fix it in a mail program", f.name, err)
		}
		for _, a := range l {
			*f.dst = append(*f.dst, a.String())
			if k := strings.ToLower(a.Address); !seen[k] {
				seen[k] = true
				d.rcpts = append(d.rcpts, a.Address)
			}
		}
	}
	if len(d.rcpts) == 0 {
		return nil, errors.New("the draft has no recipients; add them in a mail program or write a new message with " + generated.ToolMailSend)
	}
	return d, nil
}

// withoutHeader returns raw without every field named name (folded lines included).
func withoutHeader(raw []byte, name string) []byte {
	end := bytes.Index(raw, []byte("\r\n\r\n"))
	sep := 4
	if e2 := bytes.Index(raw, []byte("\n\n")); end < 0 || (e2 >= 0 && e2 < end) {
		end, sep = e2, 2
	}
	if end < 0 {
		return raw
	}
	var out bytes.Buffer
	lines := bytes.SplitAfter(raw[:end+sep/2], []byte("\n"))
	skip := false
	for _, l := range lines {
		if len(l) > 0 && (l[0] == ' ' || l[0] == '\t') {
			if !skip {
				out.Write(l)
			}
			continue
		}
		i := bytes.IndexByte(l, ':')
		skip = i > 0 && strings.EqualFold(strings.TrimSpace(string(l[:i])), name)
		if !skip {
			out.Write(l)
		}
	}
	out.Write(raw[end+sep/2:])
	return out.Bytes()
}
