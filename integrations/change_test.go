package integrations

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// TestChangeAsksAppliesAndRecords: setup shows the plan and what the agent sees, asks, writes
// the entry and records it; a no at the question changes nothing; a dry run changes nothing;
// remove takes the entry and its record away.
func TestChangeAsksAppliesAndRecords(t *testing.T) {
	e := testEnv(t)
	h := mustHost(t, "cursor")
	o := testOptions(e, "/usr/local/bin/postern")
	o.Scopes = "read"
	var out bytes.Buffer
	asked, seen := 0, 0
	no := errors.New("said no")
	answer := no
	c := &Change{
		Verb: "setup", Env: e, Config: o.Config, Out: &out,
		State:     filepath.Join(e.Home, "state.json"),
		Sees:      func(lines []string) { seen++ },
		Confirm:   func() error { asked++; return answer },
		WriteJSON: func(v any) error { t.Fatal("no JSON without a dry run"); return nil },
	}
	jobs := []Job{{Host: h, Options: o, Preset: ""}}
	registered := func() bool {
		_, _, ok, _, err := h.Registered(e, "user", DefaultName)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if err := c.Run(context.Background(), jobs); err != no || asked != 1 || seen != 1 || registered() {
		t.Fatalf("a no: %v, asked %d, shown %d, registered %v", err, asked, seen, registered())
	}
	if !strings.Contains(out.String(), "cursor") {
		t.Fatalf("the plan was not shown: %q", out.String())
	}
	c.DryRun = true
	if err := c.Run(context.Background(), jobs); err != nil || asked != 1 || registered() {
		t.Fatalf("a dry run: %v, asked %d, registered %v", err, asked, registered())
	}
	c.DryRun, answer = false, nil
	if err := c.Run(context.Background(), jobs); err != nil || !registered() {
		t.Fatalf("a yes: %v, registered %v", err, registered())
	}
	recs, err := LoadRecords(RecordPath(o.Config))
	if err != nil || len(recs) != 1 || recs[0].Host != "cursor" || recs[0].Options().Scopes != "read" {
		t.Fatalf("records %+v, %v", recs, err)
	}
	// Again: nothing to change, so nothing is asked, and what the agent sees is still said.
	asked, seen = 0, 0
	if err := c.Run(context.Background(), jobs); err != nil || asked != 0 || seen != 1 {
		t.Fatalf("setup again: %v, asked %d, shown %d", err, asked, seen)
	}
	c.Verb = "remove"
	if err := c.Run(context.Background(), jobs); err != nil || registered() {
		t.Fatalf("remove: %v, registered %v", err, registered())
	}
	if recs, _ := LoadRecords(RecordPath(o.Config)); len(recs) != 0 {
		t.Fatalf("records after remove: %+v", recs)
	}
}

// TestRowGrant: the SCOPES and ACCOUNTS columns of postern integrations list.
func TestRowGrant(t *testing.T) {
	for _, c := range []struct {
		row             Row
		scopes, account string
	}{
		{Row{}, "-", "-"},
		{Row{HTTP: "http://127.0.0.1:8765/mcp", Registered: true}, "the server's at http://127.0.0.1:8765/mcp", "-"},
		{Row{Registered: true, Recorded: true}, "from the configuration", "all"},
		{Row{Registered: true, Recorded: true, Preset: "reader", Scopes: []string{"read", "read:bodies"}, Accounts: []string{"work", "home"}}, "reader (read,read:bodies)", "work,home"},
		{Row{Registered: true, Scopes: []string{"read"}}, "read (not recorded)", "all"},
	} {
		if s, a := c.row.Grant(); s != c.scopes || a != c.account {
			t.Errorf("%+v: %q, %q; want %q, %q", c.row, s, a, c.scopes, c.account)
		}
	}
}
