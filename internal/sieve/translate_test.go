package sieve

import (
	"fmt"
	"strings"
	"testing"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/rules"
	"github.com/postern-mcp/postern/internal/search"
	"github.com/postern-mcp/postern/internal/source"
)

var dovecotExts = strings.Fields("fileinto reject envelope encoded-character vacation subaddress comparator-i;ascii-numeric relational regex imap4flags copy include variables body enotify environment mailbox date index ihave duplicate mime foreverypart extracttext")

func yes() *bool { b := true; return &b }

func ptr[T any](v T) *T { return &v }

func enabled(name string, m string, actions ...generated.RuleAction) generated.Rule {
	return generated.Rule{Name: name, State: rules.Enabled, Match: m, Actions: actions}
}

func opts() Options {
	return Options{Account: "work", Extensions: dovecotExts, Folders: map[string]string{source.RoleArchive: "Archive", source.RoleTrash: "Trash", source.RoleJunk: "Junk"}}
}

// What Sieve cannot express stays local, each with its reason; only enabled rules of the
// account count.
func TestTranslateSkips(t *testing.T) {
	mv := generated.RuleAction{Do: doMove, Folder: "X"}
	rules := []generated.Rule{
		enabled("attach", "has:attachment", mv),
		enabled("old", "before:30d", mv),
		enabled("unread", "is:unread", mv),
		enabled("auth", "is:authenticated", mv),
		enabled("nested old", "(from:*a* OR after:2w)", mv),
		enabled("forward", "from:*a*", generated.RuleAction{Do: doForward, To: "me@example.org"}),
		enabled("crlf", "subject:\"*x\r\nredirect \\\"x@evil\\\";*\"", mv),
		enabled("variable", "subject:*${stop}*", mv),
		enabled("bad domain", "from:@*.example.org", mv),
		enabled("words", "from:shop subject:receipt", mv),
		enabled("folder", "in:INBOX from:@x.org", mv),
		enabled("unreadable", "sender:x", mv),
		{Name: "pending", State: rules.Pending, Actions: []generated.RuleAction{mv}},
		{Name: "other account", Account: "home", State: rules.Enabled, Actions: []generated.RuleAction{mv}},
	}
	script, skipped := Translate(rules, opts())
	want := map[string]string{
		"attach": "attachment", "old": "age", "unread": "flags", "auth": "vouched", "nested old": "age",
		"forward": "[send] allow", "crlf": "control character", "variable": "variable",
		"bad domain": "not a domain", "words": "from:*shop*", "folder": "in:", "unreadable": "cannot be read",
	}
	got := map[string]string{}
	for _, s := range skipped {
		got[s.Rule] = s.Reason
	}
	for name, part := range want {
		if !strings.Contains(got[name], part) {
			t.Errorf("rule %q: skipped with %q, want a reason with %q", name, got[name], part)
		}
	}
	if len(got) != len(want) {
		t.Errorf("skipped %v, want exactly %v", got, want)
	}
	if !strings.HasPrefix(script, Marker+"\n") || strings.Contains(script, "require") {
		t.Errorf("with nothing translated the script is only comments:\n%s", script)
	}
	for _, sk := range skipped {
		if !strings.Contains(script, "\n# Stays local: "+comment(sk.Rule)+": ") {
			t.Errorf("the script does not name %q among the rules that stay local:\n%s", sk.Rule, script)
		}
	}
	// Body words need the server's body extension.
	body := enabled("body", "body:unsubscribe", mv)
	o := opts()
	o.Extensions = []string{"fileinto", "mailbox", "variables"}
	if _, sk := Translate([]generated.Rule{body}, o); len(sk) != 1 || !strings.Contains(sk[0].Reason, "body") {
		t.Errorf("body without the extension: %+v", sk)
	}
	if s, sk := Translate([]generated.Rule{body}, opts()); len(sk) != 0 || !strings.Contains(s, `body :text :contains "unsubscribe"`) || !strings.Contains(s, `"body"`) {
		t.Errorf("body with the extension: %+v\n%s", sk, s)
	}
}

// A move's folder is the account's as the server spells it; one the account lacks stays local.
func TestTranslateResolvesFolders(t *testing.T) {
	o := opts()
	o.Resolve = func(f string) (string, error) {
		if strings.EqualFold(f, "receipts") {
			return "Receipts", nil
		}
		return "", fmt.Errorf("account work has no folder %q", f)
	}
	rules := []generated.Rule{
		enabled("known", "subject:*invoice*", generated.RuleAction{Do: doMove, Folder: "receipts"}),
		enabled("unknown", "subject:*x*", generated.RuleAction{Do: doMove, Folder: "Nowhere"}),
	}
	script, skipped := Translate(rules, o)
	if !strings.Contains(script, `set "folder" "Receipts";`) {
		t.Errorf("the move is not to the server's folder:\n%s", script)
	}
	if len(skipped) != 1 || skipped[0].Rule != "unknown" || !strings.Contains(skipped[0].Reason, "no folder") {
		t.Errorf("skipped %+v, want the rule with the unknown folder", skipped)
	}
}

func TestTranslateConditionsAndActions(t *testing.T) {
	r := enabled("all of it", `from:*Ann* to:*team@* cc:*boss* subject:*Invoice* from:@Shop.Example (to:@example.org OR cc:@example.org) `+
		`-is:list larger:100 smaller:5000 header:X-Mailer:Bulk (from:*a@x* OR from:*b@x*) subject:*one* -(is:list) -header:X-Spam `+
		`-from:@spam.test list:announce account:WORK`, generated.RuleAction{Do: doMarkRead}, generated.RuleAction{Do: doFlag}, generated.RuleAction{Do: doArchive}, generated.RuleAction{Do: doMarkUnread}, generated.RuleAction{Do: doUnflag},
		generated.RuleAction{Do: doForward, To: "me@example.org"})
	r.Stop = yes()
	later := enabled("later", "account:home OR from:@x.test", generated.RuleAction{Do: doDelete})
	o := opts()
	o.ForwardAllowed = func(a string) bool { return a == "me@example.org" }
	script, skipped := Translate([]generated.Rule{r, later}, o)
	if len(skipped) != 0 {
		t.Fatalf("skipped %+v", skipped)
	}
	for _, want := range []string{
		`require ["copy", "fileinto", "imap4flags", "mailbox", "variables"];`,
		`header :contains "from" "Ann"`, `header :contains "to" "team@"`, `header :contains "cc" "boss"`, `header :contains "subject" "Invoice"`,
		`anyof (address :domain :is ["from"] "shop.example", address :domain :matches ["from"] "*.shop.example")`,
		`anyof (anyof (address :domain :is ["to"] "example.org", address :domain :matches ["to"] "*.example.org"), anyof (address :domain :is ["cc"] "example.org"`,
		`not exists "List-Id"`, `size :over 100`, `size :under 5000`, `header :contains "X-Mailer" "Bulk"`,
		`anyof (header :contains "from" "a@x", header :contains "from" "b@x")`,
		`not exists "X-Spam"`, `not anyof (address :domain :is ["from"] "spam.test"`, `header :contains "List-Id" "announce"`, `allof (true, `,
		`addflag "\\Seen";`, `addflag "\\Flagged";`, `set "folder" "Archive";`, `removeflag "\\Seen";`, `removeflag "\\Flagged";`,
		`redirect :copy "me@example.org";`, `set "stop" "1";`,
		"# Rule: later\nif allof (string :is \"${stop}\" \"\", anyof (false, anyof (address :domain :is [\"from\"] \"x.test\"",
		`fileinto "${folder}";`,
	} {
		if !strings.Contains(script, want) {
			t.Errorf("script lacks %s:\n%s", want, script)
		}
	}
	if strings.Contains(script, ":create") {
		t.Error("the script may create a folder")
	}
}

// Hostile text stays inside its string: quotes and backslashes are escaped, a line break
// keeps the rule local, and a name cannot end its comment line.
func TestTranslateHostile(t *testing.T) {
	evil := `";` + "\r\n" + `redirect "x@evil";`
	rules := []generated.Rule{
		enabled("quote\" and \\ back\r\nredirect \"x@evil\";", "subject:"+search.Quote(`*a"b\c";redirect "x@evil*`), generated.RuleAction{Do: doMove, Folder: `we"ird\`}),
		enabled("crlf", "from:"+search.Quote("*"+evil+"*"), generated.RuleAction{Do: doMove, Folder: "X"}),
		enabled("crlf folder", "is:list", generated.RuleAction{Do: doMove, Folder: "X\nredirect \"x@evil\";"}),
		enabled("crlf header", "header:X:"+search.Quote(evil), generated.RuleAction{Do: doMove, Folder: "X"}),
	}
	script, skipped := Translate(rules, opts())
	if len(skipped) != 3 {
		t.Errorf("skipped %+v, want the three with line breaks", skipped)
	}
	if !strings.Contains(script, `header :contains "subject" "a\"b\\c\";redirect \"x@evil"`) || !strings.Contains(script, `set "folder" "we\"ird\\";`) {
		t.Errorf("escaping:\n%s", script)
	}
	cmds := commands(t, script)
	for _, c := range cmds {
		if c == "redirect" {
			t.Errorf("a redirect got out of a string:\n%s", script)
		}
	}
	for _, line := range strings.Split(script, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "redirect") {
			t.Errorf("line %q", line)
		}
	}
}

// commands lists the identifiers of a Sieve script outside strings and comments, failing on
// an unterminated string.
func commands(t *testing.T, s string) []string {
	var out []string
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '#':
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' {
					i++
				}
			}
			if i >= len(s) {
				t.Fatalf("unterminated string in:\n%s", s)
			}
		case c >= 'a' && c <= 'z':
			j := i
			for j < len(s) && (s[j] >= 'a' && s[j] <= 'z' || s[j] == '_') {
				j++
			}
			if i == 0 || s[i-1] != ':' {
				out = append(out, s[i:j])
			}
			i = j - 1
		}
	}
	return out
}

func TestIncludes(t *testing.T) {
	for text, want := range map[string]bool{
		"require \"include\";\ninclude :personal \"postern\";\n": true,
		"require \"include\";\ninclude \"postern\";\n":           true,
		"# include :personal \"postern\";\nkeep;\n":              false,
		"include :personal \"posternx\";\n":                      false,
		"keep;\n":                                                false,
	} {
		if got := Includes(text); got != want {
			t.Errorf("Includes(%q) = %v, want %v", text, got, want)
		}
	}
}
