package holds_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/postern-mcp/postern/internal/config"
	"github.com/postern-mcp/postern/internal/mailsync"
	"github.com/postern-mcp/postern/internal/projects"
	"github.com/postern-mcp/postern/internal/store"
	"github.com/postern-mcp/postern/internal/tools"
)

// service syncs msgs (file name → raw message) from a Maildir as account "local", trusting
// the receiving servers trusted, and returns the tools over the store.
func service(t *testing.T, trusted []string, msgs map[string]string) *tools.Service {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("HOME", dir)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
	t.Setenv("XDG_DATA_HOME", filepath.Join(dir, "data"))
	t.Setenv("XDG_STATE_HOME", filepath.Join(dir, "state"))
	md := filepath.Join(dir, "Maildir")
	for _, sub := range []string{"cur", "new", "tmp"} {
		if err := os.MkdirAll(filepath.Join(md, sub), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for name, raw := range msgs {
		if err := os.WriteFile(filepath.Join(md, "cur", name), []byte(raw), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cfg := filepath.Join(dir, "config.toml")
	acct := config.Account{Name: "local", Kind: "maildir", Path: md, Address: "sam@example.com", TrustedAuthServ: trusted}
	if err := config.AddAccount(cfg, acct); err != nil {
		t.Fatal(err)
	}
	storePath := filepath.Join(dir, "store.db")
	st, err := store.Open(storePath)
	if err != nil {
		t.Fatal(err)
	}
	outs, err := mailsync.Run(context.Background(), st, []config.Account{acct}, mailsync.Options{})
	st.Close()
	if err != nil || len(outs) != 1 || outs[0].Error != "" {
		t.Fatalf("sync: %v %+v", err, outs)
	}
	svc := &tools.Service{Version: "test", Config: config.NewWatcher(cfg), StorePath: storePath}
	t.Cleanup(func() { svc.Close() })
	return svc
}

func msg(from, subject, id, authResults string) string {
	h := ""
	if authResults != "" {
		h = "Authentication-Results: " + authResults + "\r\n"
	}
	return h + "From: " + from + "\r\nTo: sam@example.com\r\nSubject: " + subject +
		"\r\nDate: Mon, 2 Jun 2025 09:00:00 +0000\r\nMessage-ID: <" + id + "@example.com>\r\n\r\nText.\r\n"
}

var mail = map[string]string{
	"1.a:2,S": msg("orders@shop.example", "Your receipt", "1", "mx.example.net; dmarc=pass header.from=shop.example"),
	"2.b:2,S": msg("orders@shop.example", "Another receipt", "2", ""),
	"3.c:2,S": msg("ann@example.com", "lunch plans", "3", ""),
}

var project = &projects.Project{ID: "p1", Name: "Shop", Senders: []string{"orders@shop.example"},
	Subjects: []string{"lunch"}, Ties: []string{"mid:2@example.com"}}

func byRoute(hs []tools.RouteHold) map[string]tools.RouteHold {
	out := map[string]tools.RouteHold{}
	for _, h := range hs {
		out[h.Route] = h
	}
	return out
}

// TestHoldsCountWhatEachRouteHolds: a senders route holds only the mail a trusted server
// authenticated and counts the rest; a subjects route and a tie hold their messages.
func TestHoldsCountWhatEachRouteHolds(t *testing.T) {
	svc := service(t, []string{"mx.example.net"}, mail)
	hs, err := svc.ProjectHolds(context.Background(), project)
	if err != nil {
		t.Fatal(err)
	}
	if len(hs) != 3 {
		t.Fatalf("want one hold per route value (senders, subjects, the tie), got %+v", hs)
	}
	r := byRoute(hs)
	if h := r["senders"]; h.Messages != 1 || h.Unauthenticated != 1 || h.Warning != "" {
		t.Errorf("senders: want the authenticated receipt held, the other counted as unauthenticated and no warning: %+v", h)
	}
	if h := r["subjects"]; h.Value != "lunch" || h.Messages != 1 || h.Count("messages") != 1 || strings.Join(h.Kinds(), ",") != "messages" {
		t.Errorf("subjects: want the lunch message: %+v (kinds %v)", h, h.Kinds())
	}
	if h := r["ties"]; h.Messages != 1 || strings.Join(h.Kinds(), ",") != "messages" {
		t.Errorf("the tie of message 2: want it held: %+v (kinds %v)", h, h.Kinds())
	}
}

// TestHoldsWarnOfUntrustedSenders: with no trusted server, a senders route holds no mail, and
// says so with what to do.
func TestHoldsWarnOfUntrustedSenders(t *testing.T) {
	svc := service(t, nil, mail)
	hs, err := svc.ProjectHolds(context.Background(), project)
	if err != nil {
		t.Fatal(err)
	}
	h := byRoute(hs)["senders"]
	if h.Messages != 0 || h.Unauthenticated != 2 || !strings.Contains(h.Warning, "trusted_authserv_ids") {
		t.Errorf("senders with no trusted server: want no mail held, 2 unauthenticated and a warning naming trusted_authserv_ids: %+v", h)
	}
}
