package mailrules_test

import (
	"strings"
	"testing"

	"github.com/postern-mcp/postern/generated"
)

func msg(from, subject, id string) string {
	return "From: " + from + "\r\nTo: sam@example.com\r\nSubject: " + subject +
		"\r\nDate: Mon, 2 Jun 2025 09:00:00 +0000\r\nMessage-ID: <" + id + "@example.com>\r\n\r\nText.\r\n"
}

// TestRuleProposedWaitsForThePerson: an agent's rule is tested against the stored mail, then
// waits, listed as pending, and runs in no coverage until it is enabled; a forward an agent
// enables still waits for the person at a terminal, and a withdrawn proposal is gone.
func TestRuleProposedWaitsForThePerson(t *testing.T) {
	m := newMailbox(t, map[string]string{
		"1.a:2,S": msg("orders@shop.example", "Your receipt", "1"),
		"2.b:2,S": msg("orders@shop.example", "Another receipt", "2"),
		"3.c:2,S": msg("ann@example.com", "lunch", "3"),
	})
	move := map[string]any{"name": "Receipts", "match": "from:@shop.example", "actions": []any{map[string]any{"do": "move", "folder": "Receipts"}}}
	sc, text := m.must("read", generated.ToolRulesTest, map[string]any{"rule": move})
	if p, _ := sc["problems"].([]any); sc["ok"] != false || len(p) != 1 || !strings.Contains(p[0].(string), `"Receipts"`) {
		t.Errorf("rules_test of a move to a folder the account lacks: want that one problem: %s", text)
	}

	rule := map[string]any{"name": "Receipts", "match": "from:@shop.example", "actions": []any{map[string]any{"do": "flag"}}}
	sc, text = m.must("read", generated.ToolRulesTest, map[string]any{"rule": rule})
	if sc["ok"] != true || sc["matched"] != float64(2) || len(rows(sc, "messages")) != 2 {
		t.Fatalf("rules_test: want ok and the 2 receipts matched: %s", text)
	}
	if acts, _ := sc["actions"].([]any); len(acts) != 1 || !strings.Contains(acts[0].(string), "flag") {
		t.Errorf("rules_test: want the one action, flag: %s", text)
	}

	m.Era = "legacy" // an agent
	sc, text = m.must("read,rules:propose", generated.ToolRulesPropose, map[string]any{"rule": rule})
	if r, _ := sc["rule"].(map[string]any); r == nil || r["state"] != "pending" {
		t.Fatalf("rules_propose: want a pending rule: %s", text)
	}
	sc, text = m.must("read", generated.ToolRulesList, map[string]any{})
	if l := rows(sc, "rules"); len(l) != 1 || l[0]["rule"].(map[string]any)["state"] != "pending" {
		t.Fatalf("rules_list: want the one pending rule: %s", text)
	}
	sc, text = m.must("read", generated.ToolRulesCoverage, map[string]any{})
	if sc["messages"] != float64(3) || sc["matched"] != float64(0) || len(rows(sc, "rules")) != 0 {
		t.Fatalf("rules_coverage with only a pending rule: want 3 messages, none matched: %s", text)
	}
	m.Era = "" // the person, at the terminal
	sc, text = m.must("read,rules:write", generated.ToolRulesUpdate, map[string]any{"id": "Receipts", "state": "enabled"})
	if sc["rule"].(map[string]any)["state"] != "enabled" {
		t.Fatalf("rules_update: want enabled: %s", text)
	}
	sc, text = m.must("read", generated.ToolRulesCoverage, map[string]any{})
	rs := rows(sc, "rules")
	if sc["matched"] != float64(2) || len(rs) != 1 || rs[0]["rule"] != "Receipts" || rs[0]["wins"] != float64(2) {
		t.Fatalf("rules_coverage with the rule enabled: want it to match and win the 2 receipts: %s", text)
	}
	if us := rows(sc, "unmatched_senders"); len(us) != 1 || !strings.Contains(text, "ann@example.com") {
		t.Errorf("rules_coverage: want ann as the one sender no rule matches: %s", text)
	}

	m.Era = "legacy"
	fwd := map[string]any{"name": "Lunch", "match": "subject:lunch", "actions": []any{map[string]any{"do": "forward", "to": "x@elsewhere.example"}}}
	m.must("read,rules:propose", generated.ToolRulesPropose, map[string]any{"rule": fwd})
	sc, text = m.must("read,rules:write", generated.ToolRulesUpdate, map[string]any{"id": "Lunch", "state": "enabled"})
	if sc["rule"].(map[string]any)["state"] != "pending" || !strings.Contains(text, "terminal") {
		t.Errorf("an agent's enabling of a forwarding rule: want it still pending, waiting for the terminal: %s", text)
	}
	m.must("read,rules:propose", generated.ToolRulesPropose, map[string]any{"id": "Lunch", "withdraw": true})
	sc, text = m.must("read", generated.ToolRulesList, map[string]any{})
	if l := rows(sc, "rules"); len(l) != 1 || l[0]["rule"].(map[string]any)["name"] != "Receipts" {
		t.Fatalf("rules_list after the withdrawal: want only Receipts: %s", text)
	}
}
