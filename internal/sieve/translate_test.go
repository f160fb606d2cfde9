package sieve

import (
	"strings"
	"testing"

	"github.com/postern-mcp/postern/internal/source"
)

var dovecotExts = strings.Fields("fileinto reject envelope encoded-character vacation subaddress comparator-i;ascii-numeric relational regex imap4flags copy include variables body enotify environment mailbox date index ihave duplicate mime foreverypart extracttext")

func yes() *bool { b := true; return &b }

func enabled(name string, m RuleMatch, actions ...RuleAction) Rule {
	return Rule{Name: name, State: StateEnabled, Match: m, Actions: actions}
}

func opts() Options {
	return Options{Account: "work", Extensions: dovecotExts, Folders: map[string]string{source.RoleArchive: "Archive", source.RoleTrash: "Trash", source.RoleJunk: "Junk"}}
}

// What Sieve cannot express stays local, each with its reason; only enabled rules of the
// account count.
func TestTranslateSkips(t *testing.T) {
	mv := RuleAction{Do: doMove, Folder: "X"}
	rules := []Rule{
		enabled("attach", RuleMatch{RuleCondition: RuleCondition{HasAttachment: yes()}}, mv),
		enabled("old", RuleMatch{RuleCondition: RuleCondition{OlderThan: "30d"}}, mv),
		enabled("unread", RuleMatch{RuleCondition: RuleCondition{Flags: []string{"unread"}}}, mv),
		enabled("auth", RuleMatch{RuleCondition: RuleCondition{Authenticated: yes()}}, mv),
		enabled("nested old", RuleMatch{Any: []RuleCondition{{From: "a"}, {YoungerThan: "2w"}}}, mv),
		enabled("forward", RuleMatch{RuleCondition: RuleCondition{From: "a"}}, RuleAction{Do: doForward, To: "me@example.org"}),
		enabled("crlf", RuleMatch{RuleCondition: RuleCondition{Subject: "x\r\nredirect \"x@evil\";"}}, mv),
		enabled("variable", RuleMatch{RuleCondition: RuleCondition{Subject: "${stop}"}}, mv),
		enabled("bad header", RuleMatch{RuleCondition: RuleCondition{Header: []RuleHeader{{Name: "X-A: b", Contains: "c"}}}}, mv),
		enabled("bad domain", RuleMatch{RuleCondition: RuleCondition{FromDomain: "*.example.org"}}, mv),
		{Name: "pending", State: "pending", Actions: []RuleAction{mv}},
		{Name: "other account", Account: "home", State: StateEnabled, Actions: []RuleAction{mv}},
	}
	script, skipped := Translate(rules, opts())
	want := map[string]string{
		"attach": "attachment", "old": "age", "unread": "flags", "auth": "vouched", "nested old": "age",
		"forward": "[send] allow", "crlf": "control character", "variable": "variable",
		"bad header": "header field name", "bad domain": "not a domain",
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
	// Body words need the server's body extension.
	body := enabled("body", RuleMatch{RuleCondition: RuleCondition{Body: []string{"unsubscribe"}}}, mv)
	o := opts()
	o.Extensions = []string{"fileinto", "mailbox", "variables"}
	if _, sk := Translate([]Rule{body}, o); len(sk) != 1 || !strings.Contains(sk[0].Reason, "body") {
		t.Errorf("body without the extension: %+v", sk)
	}
	if s, sk := Translate([]Rule{body}, opts()); len(sk) != 0 || !strings.Contains(s, `body :text :contains "unsubscribe"`) || !strings.Contains(s, `"body"`) {
		t.Errorf("body with the extension: %+v\n%s", sk, s)
	}
}

func TestTranslateConditionsAndActions(t *testing.T) {
	no := false
	r := enabled("all of it", RuleMatch{
		RuleCondition: RuleCondition{From: "Ann", To: "team@", Cc: "boss", Subject: "Invoice", FromDomain: "Shop.Example", ToDomain: "example.org",
			List: &no, Larger: 100, Smaller: 5000, Header: []RuleHeader{{Name: "X-Mailer", Contains: "Bulk"}}},
		Any:  []RuleCondition{{From: "a@x"}, {From: "b@x"}},
		All:  []RuleCondition{{Subject: "one"}},
		None: []RuleCondition{{List: yes()}},
	}, RuleAction{Do: doMarkRead}, RuleAction{Do: doFlag}, RuleAction{Do: doArchive}, RuleAction{Do: doMarkUnread}, RuleAction{Do: doUnflag},
		RuleAction{Do: doForward, To: "me@example.org"})
	r.Stop = true
	later := enabled("later", RuleMatch{}, RuleAction{Do: doDelete})
	o := opts()
	o.ForwardAllowed = func(a string) bool { return a == "me@example.org" }
	script, skipped := Translate([]Rule{r, later}, o)
	if len(skipped) != 0 {
		t.Fatalf("skipped %+v", skipped)
	}
	for _, want := range []string{
		`require ["copy", "fileinto", "imap4flags", "mailbox", "variables"];`,
		`header :contains "from" "Ann"`, `header :contains "to" "team@"`, `header :contains "cc" "boss"`, `header :contains "subject" "Invoice"`,
		`anyof (address :domain :is ["from"] "shop.example", address :domain :matches ["from"] "*.shop.example")`,
		`address :domain :is ["to", "cc"] "example.org"`,
		`not exists "List-Id"`, `size :over 100`, `size :under 5000`, `header :contains "X-Mailer" "Bulk"`,
		`anyof (header :contains "from" "a@x", header :contains "from" "b@x")`,
		`not anyof (exists "List-Id")`,
		`addflag "\\Seen";`, `addflag "\\Flagged";`, `set "folder" "Archive";`, `removeflag "\\Seen";`, `removeflag "\\Flagged";`,
		`redirect :copy "me@example.org";`, `set "stop" "1";`,
		"# Rule: later\nif allof (string :is \"${stop}\" \"\", true) {\n  set \"folder\" \"Trash\";",
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
	rules := []Rule{
		enabled("quote\" and \\ back\r\nredirect \"x@evil\";", RuleMatch{RuleCondition: RuleCondition{Subject: `a"b\c";redirect "x@evil`}}, RuleAction{Do: doMove, Folder: `we"ird\`}),
		enabled("crlf", RuleMatch{RuleCondition: RuleCondition{From: evil}}, RuleAction{Do: doMove, Folder: "X"}),
		enabled("crlf folder", RuleMatch{}, RuleAction{Do: doMove, Folder: "X\nredirect \"x@evil\";"}),
		enabled("crlf header", RuleMatch{RuleCondition: RuleCondition{Header: []RuleHeader{{Name: "X", Contains: evil}}}}, RuleAction{Do: doMove, Folder: "X"}),
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
