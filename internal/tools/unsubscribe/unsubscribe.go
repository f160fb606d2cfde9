// Package unsubscribe serves the tool of catalog/mail_unsubscribe.yaml: mail_unsubscribe,
// by the list's one-click link or by the message its mailto asks for.
package unsubscribe

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/compose"
	"github.com/postern-mcp/postern/internal/config"
	"github.com/postern-mcp/postern/internal/mailparse"
	"github.com/postern-mcp/postern/internal/store"
	"github.com/postern-mcp/postern/internal/tools/kit"
	"github.com/postern-mcp/postern/internal/tools/mail"
)

// Unsubscribe implements generated.MailUnsubscribeHandlers.
type Unsubscribe struct {
	*kit.Kit
	// Mail finds the message and sends through the mail domain.
	Mail *mail.Mail
}

var _ generated.MailUnsubscribeHandlers = (*Unsubscribe)(nil)

// Unsubscribing tells the list's sender that the address is read, and cannot be undone: it is
// a prepare/commit pair (effect send) whose preview says exactly which request goes where.
// The URIs come from the store (store.Unsubscribe) and never reach an answer: they often
// carry a token, and the agent and the person see only what mailparse.ShowURI shows.

// unsubscribeTimeout bounds the one-click POST, connection and answer included.
const unsubscribeTimeout = 10 * time.Second

// The methods of the answer (UnsubscribeResult.method).
const (
	methodOneClick = "one_click"
	methodMail     = "mail"
)

// MailUnsubscribe implements mail_unsubscribe and mail_unsubscribe_commit. The method is the
// first of: an RFC 8058 one-click POST (List-Unsubscribe-Post with an https URI); a message to
// a mailto URI through the account's SMTP server; otherwise nothing is prepared and the error
// names the page the person can open.
func (s *Unsubscribe) MailUnsubscribe(ctx context.Context, a *generated.MailUnsubscribeArgs) (*generated.Action, error) {
	st, r, err := s.Mail.Message(ctx, a.ID)
	if err != nil {
		return nil, err
	}
	if r.Forged {
		return nil, fmt.Errorf("message %s failed its sender's checks (DMARC, SPF or DKIM), so its unsubscribe link may not be the list's: postern does not use it; the person can unsubscribe from a message the list really sent", a.ID)
	}
	uris, err := st.Unsubscribe(ctx, r.ID)
	if err != nil {
		return nil, err
	}
	if len(uris) == 0 {
		if r.List {
			return nil, fmt.Errorf("message %s comes from a mailing list that offers no unsubscribe link (no List-Unsubscribe field); the person can look for one in the message or ask the list's owner", a.ID)
		}
		return nil, fmt.Errorf("message %s does not come from a mailing list (no List-Unsubscribe field), so there is nothing to unsubscribe from", a.ID)
	}
	if r.OneClick {
		for _, u := range uris {
			if mailparse.Scheme(u) == "https" {
				return oneClickAction(r, u), nil
			}
		}
	}
	for _, u := range uris {
		if mailparse.Scheme(u) == "mailto" {
			return s.mailtoAction(ctx, r, u)
		}
	}
	for _, u := range uris {
		switch mailparse.Scheme(u) {
		case "https":
			return nil, fmt.Errorf("message %s offers only a web page to unsubscribe (link: %s), which the person opens themselves from the message; postern sent nothing and changed nothing", a.ID, mailparse.ShowURI(u))
		case "http":
			return nil, fmt.Errorf("message %s offers only an unencrypted web page (http) to unsubscribe (link: %s), which the person opens themselves from the message, knowing it is not encrypted; postern sent nothing and changed nothing", a.ID, mailparse.ShowURI(u))
		}
	}
	return nil, fmt.Errorf("message %s offers no unsubscribe postern can use; the person can look for one in the message", a.ID)
}

// oneClickAction is the RFC 8058 POST of uri, an https URI of r's List-Unsubscribe.
func oneClickAction(r *store.Row, uri string) *generated.Action {
	shown := mailparse.ShowURI(uri)
	n := len(mailparse.OneClickBody)
	return &generated.Action{
		Account: r.Account,
		Preview: &generated.Prepared{
			Action:     "unsubscribe from a mailing list with one HTTPS POST (RFC 8058 one-click, application/x-www-form-urlencoded), which cannot be undone",
			To:         []string{"POST " + shown},
			BodyLines:  []string{mailparse.OneClickBody},
			BodyLength: &n,
		},
		Payload: struct {
			Kind, Message, URI string
		}{"unsubscribe_one_click", store.EncodeID(r.ID), uri},
		Run: func(ctx context.Context) (any, error) { return postOneClick(ctx, r.Account, uri) },
	}
}

// oneClickClient posts without cookies (no jar), without following any redirect (RFC 8058,
// section 3.2: the list's server must not redirect, and a redirected POST is not the
// unsubscribe asked for), with TLS verified against the system's roots.
var oneClickClient = &http.Client{
	Timeout:       unsubscribeTimeout,
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	Transport: &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		TLSHandshakeTimeout: unsubscribeTimeout,
		DisableKeepAlives:   true,
	},
}

// postOneClick sends the one POST and says what the list's server answered.
func postOneClick(ctx context.Context, account, uri string) (*generated.UnsubscribeResult, error) {
	shown := mailparse.ShowURI(uri)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, uri, strings.NewReader(mailparse.OneClickBody))
	if err != nil || req.URL.Scheme != "https" {
		return nil, fmt.Errorf("nothing was sent: the unsubscribe link %s cannot be used", shown)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("User-Agent", "postern")
	resp, err := oneClickClient.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) && ue.Timeout() {
			return nil, mail.Unknown(fmt.Errorf("the list's server at %s did not answer within %s; the unsubscribe may or may not have been received, and postern will not retry", shown, unsubscribeTimeout))
		}
		return nil, fmt.Errorf("nothing was sent: the list's server at %s could not be reached securely (%v)", shown, cause(err))
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	res := &generated.UnsubscribeResult{Method: methodOneClick, Account: account, To: "POST " + shown, Status: kit.Ptr(resp.StatusCode)}
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		res.Outcome = "accepted"
		res.Note = fmt.Sprintf("The list's server accepted the unsubscribe (HTTP %d).", resp.StatusCode)
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		res.Outcome = "not_confirmed"
		res.Note = fmt.Sprintf("The list's server answered with a redirect (HTTP %d), which RFC 8058 does not allow; postern did not follow it, so the unsubscribe may not have taken effect. The person can unsubscribe from the message's own link.", resp.StatusCode)
	default:
		res.Outcome = "not_confirmed"
		res.Note = fmt.Sprintf("The list's server refused or failed the unsubscribe (HTTP %d); postern will not retry. The person can unsubscribe from the message's own link.", resp.StatusCode)
	}
	return res, nil
}

// cause is the innermost error of an HTTP failure, without the URL net/http puts in front
// (it would show the token).
func cause(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// mailtoAction is the unsubscribe message to uri, a mailto URI of r's List-Unsubscribe
// (RFC 6068): to its address, with its subject and body, else "unsubscribe".
func (s *Unsubscribe) mailtoAction(ctx context.Context, r *store.Row, uri string) (*generated.Action, error) {
	id := store.EncodeID(r.ID)
	addr, subject, body, err := readMailto(uri)
	if err != nil {
		return nil, fmt.Errorf("message %s offers an unsubscribe address postern cannot read (%s): %v; the person can unsubscribe from the message", id, mailparse.ShowURI(uri), err)
	}
	cfg, err := s.Config.Get()
	if err != nil {
		return nil, err
	}
	if !cfg.SendAllowed(addr) {
		return nil, fmt.Errorf("the unsubscribe address %s is not among those postern may send to ([send] allow: %s), so nothing was sent or prepared; only the person can add it, in the configuration file", mailparse.ShowAddress(addr), strings.Join(cfg.Send.Allow, ", "))
	}
	acct, err := s.Mail.SendingAccount(ctx, r.Account, true)
	if err != nil {
		return nil, err
	}
	own := mail.OwnAddresses(acct)
	m := compose.Message{From: own[0], To: []compose.Address{{Addr: addr}}, Subject: subject, Body: body}
	p := mail.Preview(m, "unsubscribe from a mailing list by sending it one message, which cannot be undone")
	p.To = []string{mailparse.ShowAddress(addr)}
	return &generated.Action{
		Account: acct.Name,
		Preview: p,
		Payload: struct {
			Kind, Message string
			Mail          any
		}{"unsubscribe_mail", id, m.Normalized()},
		Run: func(ctx context.Context) (any, error) { return sendUnsubscribe(ctx, acct, m) },
	}, nil
}

// readMailto reads a mailto URI's one address and its subject and body fields.
func readMailto(uri string) (addr, subject, body string, err error) {
	u, err := url.Parse(uri)
	if err != nil || !strings.EqualFold(u.Scheme, "mailto") {
		return "", "", "", errors.New("it is not a mailto URI")
	}
	to := u.Opaque
	if to == "" {
		to = u.Path
	}
	if to, err = url.PathUnescape(to); err != nil {
		return "", "", "", errors.New("its address is badly escaped")
	}
	q := u.Query()
	if to == "" {
		to = q.Get("to")
	}
	list, err := compose.ParseList("to", []string{to})
	if err != nil || len(list) != 1 {
		return "", "", "", errors.New("it does not name exactly one address")
	}
	subject, body = q.Get("subject"), q.Get("body")
	if strings.TrimSpace(subject) == "" {
		subject = "unsubscribe"
	}
	if strings.TrimSpace(body) == "" {
		body = "unsubscribe"
	}
	if compose.CheckSubject(subject) != nil || compose.CheckBody(body) != nil {
		return "", "", "", errors.New("its subject or body cannot be sent as written")
	}
	return list[0].Addr, subject, body, nil
}

// sendUnsubscribe sends the unsubscribe message; no copy is kept in Sent (the audit log
// records it), as mail programs do for the unsubscribes they send.
func sendUnsubscribe(ctx context.Context, acct config.Account, m compose.Message) (*generated.UnsubscribeResult, error) {
	m.Date = time.Now()
	m.MessageID = compose.NewMessageID(m.From)
	wire, err := m.Bytes(false)
	if err != nil {
		return nil, fmt.Errorf("nothing was sent: %w", err)
	}
	if err := mail.Submit(ctx, acct, m.From.Addr, m.Recipients(), wire); err != nil {
		return nil, err
	}
	to := mailparse.ShowAddress(m.To[0].Addr)
	return &generated.UnsubscribeResult{
		Outcome: "sent", Method: methodMail, Account: acct.Name, To: to,
		Note: "The unsubscribe message was accepted by the account's SMTP server; the list removes the address when it reads it.",
	}, nil
}
