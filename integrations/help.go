package integrations

import (
	"fmt"
	"strings"

	"github.com/postern-mcp/postern/generated"
)

// Exits are the exit statuses of every integrations verb, as the help and
// generated/docs/hosts.md (gen/templates/hosts.md.tmpl) say them; a test holds the two together.
var Exits = []struct {
	Code    int
	Meaning string
}{
	{0, "What was asked is done: registered, removed, checked and passing, a snippet or plan printed, a dry run shown; or there was nothing to do."},
	{1, "Not done: the person said no at the prompt (or there was no `--yes` and no terminal to ask), the host's command is not on PATH (the commands to run are printed), a host command failed, or doctor found a problem."},
	{2, "The command line is wrong: an unknown host, verb, preset or flag, a missing host, `--preset` with `--scopes`, or `--http` with a host that takes no URL, a URL not on this machine, or a grant flag."},
}

// ExitsHelp is the exit statuses as the help of every integrations verb ends.
func ExitsHelp() string {
	var b strings.Builder
	b.WriteString("Exit status:\n")
	for _, e := range Exits {
		for i, l := range wrapWords(strings.ReplaceAll(e.Meaning, "`", ""), 80-5) {
			if i == 0 {
				fmt.Fprintf(&b, "  %d  %s\n", e.Code, l)
			} else {
				fmt.Fprintf(&b, "     %s\n", l)
			}
		}
	}
	return b.String()
}

// PresetsHelp is the presets as the help of the verbs that grant lists them.
func PresetsHelp() string {
	var b strings.Builder
	b.WriteString("Presets (--preset NAME; --scopes LIST for a grant of your own):\n")
	for _, p := range generated.Presets {
		def := ""
		if p.Name == generated.DefaultPreset {
			def = " (offered first)"
		}
		fmt.Fprintf(&b, "  %-10s %s%s\n", p.Name, strings.Join(p.Scopes, ","), def)
		for _, l := range wrapWords(p.Line+UntooledNote(p.Untooled), 80-13) {
			fmt.Fprintf(&b, "  %-10s %s\n", "", l)
		}
	}
	return b.String()
}

// wrapWords breaks s into lines of at most width characters, at spaces.
func wrapWords(s string, width int) []string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(s) {
		if line != "" && len([]rune(line))+1+len([]rune(w)) > width {
			lines = append(lines, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += w
	}
	return append(lines, line)
}
