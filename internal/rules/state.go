package rules

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/search"
)

// One is the rule named name in the file at path; an unknown name is an error naming the
// nearest ones.
func One(path, name string) (generated.Rule, error) {
	all, err := Load(path)
	if err != nil {
		return generated.Rule{}, err
	}
	i := Find(all, name)
	if i < 0 {
		var names []string
		for _, r := range all {
			names = append(names, r.Name)
		}
		msg := fmt.Sprintf("there is no rule %q", name)
		if near := search.Nearest(name, names); len(near) > 0 {
			msg += "; did you mean " + strings.Join(near, " or ") + "?"
		} else {
			msg += "; postern rules list shows them"
		}
		return generated.Rule{}, fmt.Errorf("%s", msg)
	}
	return all[i], nil
}

// CheckChange says why the person cannot move r to state to: a rejected rule is never
// approved (an agent proposes it again), only a pending one is rejected, and a pending one
// is approved or rejected rather than disabled. nil: it can.
func CheckChange(r generated.Rule, to string) error {
	switch {
	case to == Enabled && r.State == Rejected:
		return fmt.Errorf("rule %q was rejected; an agent must propose it again before it can be approved", r.Name)
	case to == Rejected && r.State != Pending:
		return fmt.Errorf("rule %q is %s, not pending; postern rules disable stops it", r.Name, r.State)
	case to == Disabled && r.State == Pending:
		return fmt.Errorf("rule %q is pending; approve or reject it", r.Name)
	}
	return nil
}

// SetState moves the rule the person named and looked at, r, to state to in the file at
// path; it is refused when the rule was removed or changed meanwhile, so that what is
// enabled is what was shown.
func SetState(path, name string, r generated.Rule, to string) error {
	return Update(path, func(all []generated.Rule) ([]generated.Rule, error) {
		i := Find(all, name)
		if i < 0 {
			return nil, fmt.Errorf("rule %q was removed meanwhile", name)
		}
		if !sameRule(all[i], r) {
			return nil, fmt.Errorf("rule %q changed while you looked at it; run the command again to see it as it is now", name)
		}
		all[i].State = to
		return all, nil
	})
}

func sameRule(a, b generated.Rule) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}
