package main

import (
	"encoding/json"
	"encoding/pem"
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

	"github.com/postern-mcp/postern/internal/mailparse"
	"github.com/postern-mcp/postern/internal/testing/smtptest"
)

// listServer is a list's web server on 127.0.0.1 that counts the requests it gets.
type listServer struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []listRequest
}

type listRequest struct {
	method, path, contentType, body, cookie string
}

func newListServer(t *testing.T) *listServer {
	ls := &listServer{}
	ls.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		ls.mu.Lock()
		ls.reqs = append(ls.reqs, listRequest{r.Method, r.URL.Path, r.Header.Get("Content-Type"), string(b), r.Header.Get("Cookie")})
		ls.mu.Unlock()
		switch {
		case strings.HasPrefix(r.URL.Path, "/moved"):
			http.SetCookie(w, &http.Cookie{Name: "track", Value: "1"})
			http.Redirect(w, r, "/elsewhere", http.StatusTemporaryRedirect)
		default:
			fmt.Fprintln(w, "You are unsubscribed.")
		}
	}))
	t.Cleanup(ls.Close)
	return ls
}

func (ls *listServer) requests(path string) []listRequest {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	var out []listRequest
	for _, r := range ls.reqs {
		if path == "" || r.path == path {
			out = append(out, r)
		}
	}
	return out
}

// Must-show 5: the prepare of mail_unsubscribe sends nothing; its commit sends exactly one RFC
// 8058 POST; a mailto unsubscribe reaches Mailpit once; a replay is refused; a list with only a
// web page gets its link and nothing is sent; list mail is marked in mail_list and mail_search;
// the unsubscribe tokens are in no answer and not in the audit log.
func TestUnsubscribe(t *testing.T) {
	mb := newMailbox(t, "host")
	ls := newListServer(t)
	// The binary trusts both Mailpit's certificate and the list server's.
	mailpitCert, err := os.ReadFile(filepath.Join(mb.smtp.Dir, "tls", "cert.pem"))
	if err != nil {
		t.Fatal(err)
	}
	roots := filepath.Join(t.TempDir(), "roots.pem")
	pemCert := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ls.Certificate().Raw})
	if err := os.WriteFile(roots, append(append(mailpitCert, '\n'), pemCert...), 0o600); err != nil {
		t.Fatal(err)
	}
	mb.env = append(mb.env, "SSL_CERT_FILE="+roots)

	const (
		oneToken  = "SECRETTOKEN8f3a9c2e"
		pathToken = "u81293624520527"
		pageToken = "PAGETOKEN77d1e0b4"
		mailToken = "MAILTOKEN5c4b3a21"
	)
	base := ls.URL // https://127.0.0.1:PORT
	leave := smtptest.Addr("leave")
	add := func(subject string, extra string) {
		mb.user.AddMessage(t, "INBOX", []byte(fmt.Sprintf("From: News <news@list.test>\r\nTo: %s\r\nSubject: %s\r\nDate: Tue, 24 Nov 2026 09:00:00 +0000\r\nMessage-ID: <%s-%d@list.test>\r\n%s\r\nThis week's news.\r\n",
			mb.own, subject, strings.ReplaceAll(subject, " ", "-"), time.Now().UnixNano(), extra)), "")
	}
	add("Weekly one click", "List-Id: Weekly <weekly.list.test>\r\nList-Unsubscribe: <mailto:"+leave+"?subject="+mailToken+">,\r\n <"+base+"/unsub/"+pathToken+"/one-click?t="+oneToken+">\r\nList-Unsubscribe-Post: List-Unsubscribe=One-Click\r\n")
	add("Monthly by mail", "List-Id: <monthly.list.test>\r\nList-Unsubscribe: <mailto:"+leave+"?subject=unsubscribe%20monthly>\r\n")
	add("Offers page only", "Precedence: bulk\r\nList-Unsubscribe: <"+base+"/page?t="+pageToken+">\r\n")
	add("Moved one click", "List-Unsubscribe: <"+base+"/moved?t="+oneToken+">\r\nList-Unsubscribe-Post: List-Unsubscribe=One-Click\r\n")
	add("Bulk without link", "Precedence: bulk\r\n")
	mb.sync(t)

	cs := mb.connect(t, "read,read:headers,mail:modify", nil)
	var answers []string
	callKeep := func(name string, args map[string]any) (map[string]any, string, bool) {
		t.Helper()
		sc, text, isErr := call(t, cs, name, args)
		b, _ := json.Marshal(sc)
		answers = append(answers, text, string(b))
		return sc, text, isErr
	}

	// Rows of list mail say so, in mail_list and in mail_search; others say nothing.
	sc, text, _ := callKeep("mail_list", map[string]any{"folder": "INBOX"})
	rows := map[string]map[string]any{}
	for _, x := range sc["messages"].([]any) {
		r := x.(map[string]any)
		rows[r["subject"].(string)] = r
	}
	for subject, want := range map[string][2]any{
		"Weekly one click": {true, true}, "Monthly by mail": {true, nil}, "Offers page only": {true, nil},
		"Moved one click": {true, true}, "Bulk without link": {true, nil}, "Lunch on Friday?": {nil, nil},
	} {
		r := rows[subject]
		if r == nil || r["list"] != want[0] || r["one_click"] != want[1] {
			t.Errorf("mail_list row %q: list %v one_click %v, want %v\n%s", subject, r["list"], r["one_click"], want, text)
		}
	}
	sc, text, _ = callKeep("mail_search", map[string]any{"query": `subject:"weekly one click"`})
	if msgs, _ := sc["messages"].([]any); len(msgs) != 1 || msgs[0].(map[string]any)["list"] != true || msgs[0].(map[string]any)["one_click"] != true {
		t.Errorf("mail_search row: %s", text)
	}
	id := func(subject string) string { return rows[subject]["id"].(string) }

	// mail_headers shows the field without its tokens.
	_, text, _ = callKeep("mail_headers", map[string]any{"id": id("Weekly one click")})
	if !strings.Contains(text, "List-Unsubscribe") || !strings.Contains(text, "/unsub/…/one-click?…") {
		t.Errorf("mail_headers does not show the unsubscribe field as expected:\n%s", text)
	}

	// One-click: the prepare sends nothing and says what will go where.
	args := map[string]any{"id": id("Weekly one click")}
	prep, text, isErr := callKeep("mail_unsubscribe", args)
	if isErr {
		t.Fatalf("mail_unsubscribe: %s", text)
	}
	shown := "POST " + base + "/unsub/…/one-click?…"
	if to, _ := prep["to"].([]any); len(to) != 1 || to[0] != shown || prep["commit"] != "mail_unsubscribe_commit" ||
		!strings.Contains(fmt.Sprint(prep["body_lines"]), "List-Unsubscribe=One-Click") || !strings.Contains(prep["action"].(string), "POST") {
		t.Fatalf("preview: %v", prep)
	}
	if n := len(ls.requests("")); n != 0 {
		t.Fatalf("the prepare sent %d requests", n)
	}
	res, text, isErr := callKeep("mail_unsubscribe_commit", with(args, "token", prep["token"]))
	if isErr || res["outcome"] != "accepted" || res["method"] != "one_click" || res["status"] != float64(200) || res["to"] != shown {
		t.Fatalf("mail_unsubscribe_commit: %v %s", res, text)
	}
	got := ls.requests("")
	if len(got) != 1 {
		t.Fatalf("the commit sent %d requests, want 1: %v", len(got), got)
	}
	if r := got[0]; r.method != http.MethodPost || r.path != "/unsub/"+pathToken+"/one-click" || r.body != "List-Unsubscribe=One-Click" ||
		r.contentType != "application/x-www-form-urlencoded" || r.cookie != "" {
		t.Fatalf("the request: %+v", r)
	}
	_, text, isErr = callKeep("mail_unsubscribe_commit", with(args, "token", prep["token"]))
	if !isErr || !refusalRE.MatchString(text) {
		t.Fatalf("a replay was not refused: %s", text)
	}
	if n := len(ls.requests("")); n != 1 {
		t.Fatalf("after the replay the server got %d requests, want 1", n)
	}

	// A redirect is not followed (RFC 8058: the list's server must not redirect).
	args = map[string]any{"id": id("Moved one click")}
	prep, _, _ = callKeep("mail_unsubscribe", args)
	res, text, _ = callKeep("mail_unsubscribe_commit", with(args, "token", prep["token"]))
	if res["outcome"] != "not_confirmed" || res["status"] != float64(307) || len(ls.requests("/moved")) != 1 || len(ls.requests("/elsewhere")) != 0 {
		t.Fatalf("a redirected one-click: %v %s; requests %v", res, text, ls.requests(""))
	}

	// Mailto: the prepare sends nothing; the commit reaches Mailpit once; a replay is refused.
	args = map[string]any{"id": id("Monthly by mail")}
	prep, text, isErr = callKeep("mail_unsubscribe", args)
	if isErr {
		t.Fatalf("mail_unsubscribe by mail: %s", text)
	}
	// The address's part before @ is hidden when it looks like a token, as smtptest's often do.
	if to, _ := prep["to"].([]any); len(to) != 1 || to[0] != mailparse.ShowAddress(leave) || !strings.HasSuffix(leave, to[0].(string)[strings.Index(to[0].(string), "@"):]) || prep["subject"] != "unsubscribe monthly" || prep["from"] == nil {
		t.Fatalf("preview by mail: %v", prep)
	}
	if n := len(mb.smtp.Messages(t, leave)); n != 0 {
		t.Fatalf("the prepare sent %d messages", n)
	}
	res, text, isErr = callKeep("mail_unsubscribe_commit", with(args, "token", prep["token"]))
	if isErr || res["outcome"] != "sent" || res["method"] != "mail" {
		t.Fatalf("mail_unsubscribe_commit by mail: %v %s", res, text)
	}
	sent := mb.smtp.WaitCount(t, leave, 1, 10*time.Second)
	if sent[0].Subject != "unsubscribe monthly" {
		t.Fatalf("sent %+v", sent[0])
	}
	if _, text, isErr = callKeep("mail_unsubscribe_commit", with(args, "token", prep["token"])); !isErr || !refusalRE.MatchString(text) {
		t.Fatalf("a replay by mail was not refused: %s", text)
	}
	time.Sleep(500 * time.Millisecond)
	if n := len(mb.smtp.Messages(t, leave)); n != 1 {
		t.Fatalf("Mailpit holds %d unsubscribe messages, want 1", n)
	}

	// A web page only: its link for the person, nothing sent, no token issued.
	sc, text, isErr = callKeep("mail_unsubscribe", map[string]any{"id": id("Offers page only")})
	if !isErr || len(sc) != 0 || !strings.Contains(text, base+"/page?…") || !strings.Contains(text, "web page") || strings.Contains(text, "token") {
		t.Fatalf("a page-only list: %v %s", sc, text)
	}
	if n := len(ls.requests("/page")); n != 0 {
		t.Fatalf("the page was requested %d times", n)
	}
	// A list without a link, and a message not from a list, say so.
	for _, subject := range []string{"Bulk without link", "Lunch on Friday?"} {
		if _, text, isErr := callKeep("mail_unsubscribe", map[string]any{"id": id(subject)}); !isErr || !strings.Contains(text, "List-Unsubscribe") {
			t.Errorf("%s: %s", subject, text)
		}
	}

	// No token in any answer, nor in the audit log.
	audit, _ := json.Marshal(auditLines(t, mb.env))
	for _, tok := range []string{oneToken, pathToken, pageToken, mailToken} {
		for _, a := range answers {
			if strings.Contains(a, tok) {
				t.Errorf("an answer shows the token %s:\n%s", tok, a)
			}
		}
		if strings.Contains(string(audit), tok) {
			t.Errorf("the audit log holds the token %s", tok)
		}
	}
}
