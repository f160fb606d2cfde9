package integrations

import (
	"os"
	"os/exec"
	"testing"

	"github.com/postern-mcp/postern/internal/termsafe"
)

// A word with a character a terminal acts on or hides is shown in $'…' quoting: nothing in it
// drives the terminal, and bash reads it back as the same word.
func TestShellQuoteIsTerminalSafe(t *testing.T) {
	// bash reads \u escapes from 4.2 on, in a UTF-8 locale.
	bash, err := exec.LookPath("bash")
	if err == nil && exec.Command(bash, "-c", `(( BASH_VERSINFO[0] > 4 || BASH_VERSINFO[0] == 4 && BASH_VERSINFO[1] >= 2 ))`).Run() != nil {
		bash = ""
	}
	for _, c := range []struct{ word, want string }{
		{"/usr/bin/postern", "/usr/bin/postern"},
		{"a b", "'a b'"},
		{"it's", `'it'\''s'`},
		{`back\slash`, `'back\slash'`},
		{"e\x1b]0;pwn\x07\u202e'q\\", `$'e\x1b]0;pwn\x07\u202e\'q\\'`},
		{"line\nbreak", `$'line\nbreak'`},
		{"bad\xffbyte", `$'bad\xffbyte'`},
	} {
		got := shellQuote(c.word)
		if got != c.want {
			t.Errorf("shellQuote(%q) = %s, want %s", c.word, got, c.want)
		}
		for _, r := range got {
			if r != '\\' && termsafe.Unsafe(r) {
				t.Errorf("shellQuote(%q) = %q holds %U", c.word, got, r)
			}
		}
		if bash == "" {
			continue
		}
		cmd := exec.Command(bash, "-c", "printf %s "+got)
		cmd.Env = append(os.Environ(), "LC_ALL=C.UTF-8")
		out, err := cmd.Output()
		if err != nil || string(out) != c.word {
			t.Errorf("bash reads %s as %q (%v), want %q", got, out, err, c.word)
		}
	}
}
