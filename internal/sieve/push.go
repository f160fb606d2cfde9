package sieve

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/postern-mcp/postern/internal/source"
)

// Outcome is what Push did about the active script.
type Outcome string

// What Push did. In every case postern's script is stored as ScriptName; the person's own
// scripts are never changed, deactivated or removed.
const (
	// Activated: no script was active; postern's now is.
	Activated Outcome = "activated"
	// AlreadyActive: postern's script was the active one; its new text runs from now on.
	AlreadyActive Outcome = "already_active"
	// Included: the person's active script includes postern's already, so it runs.
	Included Outcome = "included"
	// NeedsInclude: the person's own script is active and does not include postern's, which
	// therefore does not run until they add IncludeLine to theirs (or choose to activate
	// postern's instead of theirs themselves).
	NeedsInclude Outcome = "needs_include"
	// Inactive: the person's own script is active and the server cannot include one script
	// from another: postern's is stored but does not run unless the person activates it
	// instead of theirs.
	Inactive Outcome = "inactive"
)

// IncludeLine is the line a person's active script needs to run postern's (with "include" in
// its require).
const IncludeLine = `include :personal "` + ScriptName + `";`

// Pushed is what Push did.
type Pushed struct {
	Script  string  `json:"script"`  // the name postern's script has on the server
	Outcome Outcome `json:"outcome"` // what happened about the active script
	Active  string  `json:"active"`  // the active script now
	// IncludeLine is set when Outcome is NeedsInclude: what their script must hold.
	IncludeLine string `json:"include_line,omitempty"`
	// Message says it in a sentence or two for the person.
	Message string `json:"message"`
}

// Expect is what Push would do now, changing nothing: the scripts on the server and which one
// is active decide it. Its Message says it in the future tense. A script named postern that
// postern did not write is an error, as Push would refuse it.
func Expect(ctx context.Context, st source.ScriptStore) (Pushed, error) {
	p, err := expect(ctx, st)
	if err != nil {
		return Pushed{}, err
	}
	p.Message = p.say(false)
	return p, nil
}

// expect works out p's Outcome, Active and IncludeLine.
func expect(ctx context.Context, st source.ScriptStore) (Pushed, error) {
	scripts, active, err := st.Scripts(ctx)
	if err != nil {
		return Pushed{}, err
	}
	for _, s := range scripts {
		if s.Name != ScriptName {
			continue
		}
		old, err := st.Get(ctx, ScriptName)
		if err != nil {
			return Pushed{}, err
		}
		if !strings.HasPrefix(old, Marker) {
			return Pushed{}, fmt.Errorf("the server already holds a script named %q that postern did not write, so nothing was changed; rename that script in your mail program and push again", ScriptName)
		}
	}
	p := Pushed{Script: ScriptName, Active: active}
	switch active {
	case "":
		p.Outcome = Activated
	case ScriptName:
		p.Outcome = AlreadyActive
	default:
		theirs, err := st.Get(ctx, active)
		if err != nil {
			return Pushed{}, err
		}
		switch {
		case Includes(theirs):
			p.Outcome = Included
		case hasExt(st.Extensions(), "include"):
			p.Outcome, p.IncludeLine = NeedsInclude, IncludeLine
		default:
			p.Outcome = Inactive
		}
	}
	return p, nil
}

// say is what p means for the person, once done or (done false) before.
func (p Pushed) say(done bool) string {
	pick := func(before, after string) string {
		if done {
			return after
		}
		return before
	}
	switch p.Outcome {
	case Activated:
		return pick(fmt.Sprintf("No Sieve script is active on the server; postern's script %q will be stored and made active, and will run on every message delivered.", ScriptName),
			fmt.Sprintf("No Sieve script was active on the server; postern's script %q now is, and runs on every message delivered.", ScriptName))
	case AlreadyActive:
		return pick(fmt.Sprintf("postern's script %q is the active one and will hold the new rules.", ScriptName),
			fmt.Sprintf("postern's script %q was active and now holds the new rules.", ScriptName))
	case Included:
		return pick(fmt.Sprintf("Your active script %q includes postern's script %q, which will hold the new rules; yours stays as it is.", p.Active, ScriptName),
			fmt.Sprintf("Your active script %q includes postern's script %q, which now holds the new rules.", p.Active, ScriptName))
	case NeedsInclude:
		return pick(fmt.Sprintf("Your own script %q is active and will be left as it is, so postern's script %q will be stored but will not run until you add %s to yours (with \"include\" in its require).", p.Active, ScriptName, IncludeLine),
			fmt.Sprintf("Your own script %q is active and was left as it is, so postern's script %q is stored but does not run: add %s to yours (with \"include\" in its require) to run both.", p.Active, ScriptName, IncludeLine))
	}
	return pick(fmt.Sprintf("Your own script %q is active and will be left as it is, and this server cannot include one script from another, so postern's script %q will be stored but will not run unless you activate it instead of yours.", p.Active, ScriptName),
		fmt.Sprintf("Your own script %q is active and was left as it is, and this server cannot include one script from another, so postern's script %q is stored but does not run; activate it in your mail program only if it should run instead of yours.", p.Active, ScriptName))
}

// Push stores script (written by Translate) as the script "postern" and makes it run without
// replacing the person's own:
//
//   - no script active: postern's is activated;
//   - postern's active: it is replaced in place and stays active;
//   - another script active that includes postern's (include ... "postern"): nothing else;
//   - another script active that does not: it stays active and unchanged, postern's is
//     stored but does not run, and the answer shows the line to add to theirs. Push never
//     rewrites a script it did not write, even to add that line.
//
// A script named postern that postern did not write (it lacks Marker) is not replaced: Push
// changes nothing and says so. The server compiles the script before storing it; one it
// refuses is an error with the server's reason, and nothing was changed.
func Push(ctx context.Context, st source.ScriptStore, script string) (Pushed, error) {
	if !strings.HasPrefix(script, Marker+"\n") {
		return Pushed{}, fmt.Errorf("the script to push was not written by postern's translation; make it with postern rules push")
	}
	p, err := expect(ctx, st)
	if err != nil {
		return Pushed{}, err
	}
	if err := st.Put(ctx, ScriptName, script); err != nil {
		return Pushed{}, err
	}
	if p.Outcome == Activated {
		if err := st.Activate(ctx, ScriptName); err != nil {
			return Pushed{}, fmt.Errorf("postern's script is stored but could not be made active: %w", err)
		}
		p.Active = ScriptName
	}
	p.Message = p.say(true)
	return p, nil
}

// includeRe finds an include of postern's script (comments are stripped first).
var includeRe = regexp.MustCompile(`(?i)\binclude\b[^;]*"` + ScriptName + `"`)

// Includes says whether a script includes postern's.
func Includes(script string) bool {
	var b strings.Builder
	for _, line := range strings.Split(script, "\n") {
		if i := strings.IndexByte(line, '#'); i >= 0 && !strings.Contains(line[:i], `"`) {
			line = line[:i]
		}
		b.WriteString(line + "\n")
	}
	return includeRe.MatchString(b.String())
}

func hasExt(exts []string, ext string) bool {
	for _, e := range exts {
		if strings.EqualFold(e, ext) {
			return true
		}
	}
	return false
}
