package unsubscribe

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/config"
	"github.com/postern-mcp/postern/internal/dispatch"
	"github.com/postern-mcp/postern/internal/mailparse"
	"github.com/postern-mcp/postern/internal/mailsync"
	"github.com/postern-mcp/postern/internal/store"
	"github.com/postern-mcp/postern/internal/testing/imaptest"
	"github.com/postern-mcp/postern/internal/testing/smtptest"
	"github.com/postern-mcp/postern/internal/tools/kit"
	"github.com/postern-mcp/postern/internal/tools/mail"
	"github.com/postern-mcp/postern/internal/tools/view"
)

// listServer is a list's HTTPS server: /ok accepts, /moved redirects, /fail fails; it
// records what it was sent. The one-click client trusts its certificate for the test (the
// system's roots do not hold it); everything else about the client stays as it is.
type listServer struct {
	*httptest.Server
	mu  sync.Mutex
	got []string // method, path, content type and body of each request
}

func newListServer(t *testing.T) *listServer {
	ls := &listServer{}
	ls.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		ls.mu.Lock()
		ls.got = append(ls.got, r.Method+" "+r.URL.Path+" "+r.Header.Get("Content-Type")+" "+string(b))
		ls.mu.Unlock()
		switch r.URL.Path {
		case "/ok":
			w.WriteHeader(http.StatusOK)
		case "/moved":
			http.Redirect(w, r, "/ok", http.StatusFound)
		default:
			w.WriteHeader(http.StatusInternalServerError)
		}
	}))
	t.Cleanup(ls.Close)
	pool := x509.NewCertPool()
	pool.AddCert(ls.Certificate())
	tr := oneClickClient.Transport.(*http.Transport)
	old := tr.TLSClientConfig
	tr.TLSClientConfig = &tls.Config{RootCAs: pool}
	t.Cleanup(func() { tr.TLSClientConfig = old })
	return ls
}

func (ls *listServer) requests() []string {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return append([]string{}, ls.got...)
}

func listMsg(id, subject, headers string) string {
	return fmt.Sprintf("From: News <news@list.example>\r\nTo: sam@example.com\r\nSubject: %s\r\nMessage-ID: <%s>\r\nDate: Mon, 2 Mar 2026 10:00:00 +0000\r\n%s\r\nThis week's news.\r\n", subject, id, headers)
}

// inbox syncs msgs (subject → raw) from a Maildir into a real store and returns the tool.
type inbox struct {
	t         *testing.T
	cfg, path string
	u         *Unsubscribe
}

func newInbox(t *testing.T, acct config.Account, msgs map[string]string, extraConfig string) *inbox {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("HOME", dir)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
	t.Setenv("XDG_DATA_HOME", filepath.Join(dir, "data"))
	t.Setenv("XDG_STATE_HOME", filepath.Join(dir, "state"))
	if acct.Kind == "maildir" {
		acct.Path = filepath.Join(dir, "Maildir")
		for _, sub := range []string{"cur", "new", "tmp"} {
			os.MkdirAll(filepath.Join(acct.Path, sub), 0o700)
		}
		i := 0
		for _, raw := range msgs {
			i++
			os.WriteFile(filepath.Join(acct.Path, "cur", fmt.Sprintf("%d:2,S", i)), []byte(raw), 0o600)
		}
	}
	in := &inbox{t: t, cfg: filepath.Join(dir, "config.toml"), path: filepath.Join(dir, "store.db")}
	if err := config.AddAccount(in.cfg, acct); err != nil {
		t.Fatal(err)
	}
	if extraConfig != "" {
		f, _ := os.OpenFile(in.cfg, os.O_APPEND|os.O_WRONLY, 0o600)
		f.WriteString(extraConfig)
		f.Close()
	}
	st, err := store.Open(in.path)
	if err != nil {
		t.Fatal(err)
	}
	outs, err := mailsync.Run(context.Background(), st, []config.Account{acct}, mailsync.Options{})
	st.Close()
	if err != nil || outs[0].Error != "" {
		t.Fatalf("sync: %v %+v", err, outs)
	}
	k := &kit.Kit{Config: config.NewWatcher(in.cfg)}
	in.u = &Unsubscribe{Kit: k, Mail: &mail.Mail{Kit: k}}
	return in
}

func (in *inbox) ctx() context.Context {
	o := &view.Opener{Config: in.u.Config, StorePath: in.path}
	in.t.Cleanup(func() { o.Close() })
	return o.Open(dispatch.WithInfo(context.Background(), dispatch.CallInfo{Era: "legacy", Scopes: []string{generated.ScopeRead, generated.ScopeMailSend}}))
}

func (in *inbox) id(subject string) string {
	in.t.Helper()
	res, err := in.u.Mail.MailList(in.ctx(), &generated.MailListArgs{Limit: 50})
	if err != nil {
		in.t.Fatal(err)
	}
	for _, r := range res.Messages {
		if r.Subject == subject {
			return r.ID
		}
	}
	in.t.Fatalf("no message %q", subject)
	return ""
}

const post = "List-Unsubscribe-Post: List-Unsubscribe=One-Click\r\n"

// TestUnsubscribeOneClick: the one-click POST goes to the list's server, the preview and the
// answer never show the link's token, and what the server answers is said as it is.
func TestUnsubscribeOneClick(t *testing.T) {
	ls := newListServer(t)
	in := newInbox(t, config.Account{Name: "local", Kind: "maildir", Address: "sam@example.com"}, map[string]string{
		"Weekly":  listMsg("w@x", "Weekly", "List-Unsubscribe: <mailto:leave@list.example>, <"+ls.URL+"/ok?token=s3cr3t>\r\n"+post),
		"Moved":   listMsg("m@x", "Moved", "List-Unsubscribe: <"+ls.URL+"/moved?token=s3cr3t>\r\n"+post),
		"Failing": listMsg("f@x", "Failing", "List-Unsubscribe: <"+ls.URL+"/fail?token=s3cr3t>\r\n"+post),
		"Web":     listMsg("web@x", "Web", "List-Unsubscribe: <https://list.example/u?token=s3cr3t>\r\n"),
		"Plain":   listMsg("http@x", "Plain", "List-Unsubscribe: <http://list.example/u?token=s3cr3t>\r\n"),
		"Listed":  listMsg("l@x", "Listed", "List-Id: <news.list.example>\r\n"),
		"Note":    "From: Ann <ann@example.org>\r\nTo: sam@example.com\r\nSubject: Note\r\nMessage-ID: <n@x>\r\nDate: Mon, 2 Mar 2026 10:00:00 +0000\r\n\r\nHi.\r\n",
		"Mailto":  listMsg("mt@x", "Mailto", "List-Unsubscribe: <mailto:leave@list.example?subject=Remove%20me>\r\n"),
	}, "")
	act, err := in.u.MailUnsubscribe(in.ctx(), &generated.MailUnsubscribeArgs{ID: in.id("Weekly")})
	if err != nil {
		t.Fatal(err)
	}
	host := strings.TrimPrefix(ls.URL, "https://")
	if len(act.Preview.To) != 1 || !strings.HasPrefix(act.Preview.To[0], "POST https://"+host+"/") || strings.Contains(act.Preview.To[0], "s3cr3t") || act.Account != "local" {
		t.Errorf("one-click preview: %+v", act.Preview)
	}
	if len(ls.requests()) != 0 {
		t.Fatal("preparing sent a request")
	}
	out, err := act.Run(in.ctx())
	if err != nil {
		t.Fatal(err)
	}
	res := out.(*generated.UnsubscribeResult)
	if res.Outcome != "accepted" || res.Method != "one_click" || res.Status == nil || *res.Status != 200 || strings.Contains(res.To, "s3cr3t") {
		t.Errorf("one-click answer: %+v", res)
	}
	if got := ls.requests(); len(got) != 1 || got[0] != "POST /ok application/x-www-form-urlencoded List-Unsubscribe=One-Click" {
		t.Errorf("the list's server got %q", got)
	}
	for subject, want := range map[string]string{"Moved": "answered with a redirect (HTTP 302)", "Failing": "refused or failed the unsubscribe (HTTP 500)"} {
		act, err := in.u.MailUnsubscribe(in.ctx(), &generated.MailUnsubscribeArgs{ID: in.id(subject)})
		if err != nil {
			t.Fatal(err)
		}
		out, err := act.Run(in.ctx())
		if res, _ := out.(*generated.UnsubscribeResult); err != nil || res.Outcome != "not_confirmed" || !strings.Contains(res.Note, want) {
			t.Errorf("%s: %+v %v; want %q", subject, out, err, want)
		}
	}
	if got := ls.requests(); len(got) != 3 {
		t.Errorf("a redirect was followed: %q", got)
	}
	// What cannot be used is said, without the token, and nothing is prepared.
	for subject, want := range map[string]string{
		"Web":    "offers only a web page to unsubscribe (link: https://list.example/",
		"Plain":  "offers only an unencrypted web page (http)",
		"Listed": "comes from a mailing list that offers no unsubscribe link",
		"Note":   "does not come from a mailing list",
		"Mailto": "account local is a read-only maildir import",
	} {
		act, err := in.u.MailUnsubscribe(in.ctx(), &generated.MailUnsubscribeArgs{ID: in.id(subject)})
		if err == nil || act != nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "s3cr3t") {
			t.Errorf("%s: %v; want %q", subject, err, want)
		}
	}
	// A server that cannot be reached: nothing was sent.
	ls.Close()
	_, err = postOneClick(in.ctx(), "local", ls.URL+"/ok?token=s3cr3t")
	if err == nil || !strings.HasPrefix(err.Error(), "nothing was sent: the list's server at https://") || strings.Contains(err.Error(), "s3cr3t") {
		t.Errorf("an unreachable server: %v", err)
	}
	if _, err := postOneClick(in.ctx(), "local", "http://list.example/u"); err == nil || !strings.HasPrefix(err.Error(), "nothing was sent: the unsubscribe link") {
		t.Errorf("a one-click link that is not https: %v", err)
	}
	if _, err := in.u.MailUnsubscribe(in.ctx(), &generated.MailUnsubscribeArgs{ID: "m0"}); err == nil || !strings.HasPrefix(err.Error(), "there is no such message here") {
		t.Errorf("a bogus id: %v", err)
	}
}

// TestUnsubscribeMailto: over real Dovecot and Mailpit, the unsubscribe message goes to the
// list's address with the subject it asks for; [send] allow refuses an address it leaves out.
func TestUnsubscribeMailto(t *testing.T) {
	srv := imaptest.Start(t)
	mp := smtptest.Start(t)
	u := srv.NewUser(t)
	own, leave := smtptest.Addr("me"), smtptest.Addr("leave")
	u.AddMessage(t, "INBOX", []byte(listMsg("news-"+filepath.Base(t.TempDir())+"@list.example", "News", "List-Unsubscribe: <mailto:"+leave+"?subject=Remove%20me>\r\n")), "S")
	u.AddMessage(t, "INBOX", []byte(listMsg("other-"+filepath.Base(t.TempDir())+"@list.example", "Other", "List-Unsubscribe: <mailto:out@elsewhere.example>\r\n")), "S")
	dir := t.TempDir()
	pw, spw := filepath.Join(dir, "pw"), filepath.Join(dir, "spw")
	os.WriteFile(pw, []byte(u.Password+"\n"), 0o600)
	os.WriteFile(spw, []byte(mp.Password+"\n"), 0o600)
	acct := config.Account{Name: "work", Kind: "imap", Server: srv.Addr, User: u.Name, TLS: "none", PasswordCmd: "cat " + pw,
		Address: own, SMTP: mp.SMTP, SMTPTLS: "starttls", SMTPUser: mp.User, SMTPPasswordCmd: "cat " + spw,
		TLSCA: filepath.Join(mp.Dir, "tls", "cert.pem")}
	in := newInbox(t, acct, nil, "\n[send]\nallow = [\""+leave+"\"]\n")
	act, err := in.u.MailUnsubscribe(in.ctx(), &generated.MailUnsubscribeArgs{ID: in.id("News")})
	if err != nil {
		t.Fatal(err)
	}
	if act.Preview.Subject != "Remove me" || len(act.Preview.To) != 1 || act.Preview.To[0] != mailparse.ShowAddress(leave) {
		t.Errorf("mailto preview: %+v", act.Preview)
	}
	out, err := act.Run(in.ctx())
	if err != nil {
		t.Fatal(err)
	}
	if res := out.(*generated.UnsubscribeResult); res.Outcome != "sent" || res.Method != "mail" || res.To != mailparse.ShowAddress(leave) || res.Account != "work" {
		t.Errorf("mailto answer: %+v", res)
	}
	got := mp.WaitCount(t, leave, 1, 10*time.Second)
	if got[0].Subject != "Remove me" || got[0].From != own {
		t.Errorf("the list received %+v", got[0])
	}
	_, err = in.u.MailUnsubscribe(in.ctx(), &generated.MailUnsubscribeArgs{ID: in.id("Other")})
	if err == nil || !strings.Contains(err.Error(), "is not among those postern may send to ([send] allow: "+leave+")") {
		t.Errorf("an unsubscribe address [send] allow leaves out: %v", err)
	}
}
