package rules

import (
	"fmt"
	"net/mail"
	"strings"
	"time"

	"github.com/postern-mcp/postern/generated"
)

// Checker holds what checking a rule needs to know of the person's setup.
type Checker struct {
	// Accounts are the account names the rule may name.
	Accounts []string
	// Folder says what is wrong with a folder name of an account (nil: it exists);
	// account "" means every account the rule acts on.
	Folder func(account, name string) error
	// SendAllowed says whether a forward may reach addr ([send] allow).
	SendAllowed func(addr string) bool
	// Nearest names the nearest of candidates to a mistyped name.
	Nearest func(name string, candidates []string) []string
}

// Problems lists what is wrong with r, one sentence each.
func (c Checker) Problems(r generated.Rule) []string {
	var ps []string
	add := func(format string, args ...any) { ps = append(ps, fmt.Sprintf(format, args...)) }
	if err := ValidName(r.Name); err != nil {
		add("%v", err)
	}
	if r.Account != "" && !contains(c.Accounts, r.Account) {
		msg := fmt.Sprintf("account %q is not configured", r.Account)
		if c.Nearest != nil {
			if near := c.Nearest(r.Account, c.Accounts); len(near) > 0 {
				msg += "; the nearest: " + strings.Join(near, ", ")
			}
		}
		add("%s", msg)
	}
	if q, err := Query(r, time.Now()); err != nil {
		add("%v", err)
	} else if q.Empty() {
		add("the rule has no condition, so it would act on every message; give match a query, such as from:@shop.example subject:receipt")
	} else if q.Smaller != nil && *q.Smaller == 0 {
		add("smaller:0 holds for no message")
	} else if q.Smaller != nil && *q.Smaller <= q.Larger+1 {
		add("larger:%d and smaller:%d can never both hold", q.Larger, *q.Smaller)
	}
	if len(r.Actions) == 0 {
		add("the rule does nothing; give at least one action")
	}
	moves := 0
	for i, a := range r.Actions {
		switch a.Do {
		case "move":
			moves++
			if strings.TrimSpace(a.Folder) == "" {
				add("action %d (move) needs a folder", i+1)
			} else if c.Folder != nil {
				if err := c.Folder(r.Account, a.Folder); err != nil {
					add("action %d (move): %v", i+1, err)
				}
			}
		case "archive", "junk", "delete":
			moves++
		case "forward":
			addr, err := mail.ParseAddress(a.To)
			switch {
			case err != nil || addr.Name != "" || addr.Address != strings.TrimSpace(a.To):
				add("action %d (forward) needs one bare address in to, such as assistant@example.com", i+1)
			case c.SendAllowed != nil && !c.SendAllowed(addr.Address):
				add("action %d (forward): %s is not among the recipients postern may send to ([send] allow)", i+1, addr.Address)
			}
		}
		if a.Do != "move" && a.Folder != "" {
			add("action %d (%s) takes no folder; folder is for move", i+1, a.Do)
		}
		if a.Do != "forward" && a.To != "" {
			add("action %d (%s) takes no to; to is for forward", i+1, a.Do)
		}
	}
	if moves > 1 {
		add("the rule moves a message more than once (archive, move, junk and delete each move it); keep one")
	}
	return ps
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
