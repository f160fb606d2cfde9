package demo

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/postern-mcp/postern/generated"
)

// The session shows what it is there to show, and the temporary folder is gone afterwards.
func TestRunShowsTheSafetyRulesAndLeavesNothing(t *testing.T) {
	tmp := t.TempDir()
	for _, v := range []string{"HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"} {
		t.Setenv(v, filepath.Join(tmp, strings.ToLower(v)))
	}
	t.Setenv("TMPDIR", tmp)
	var out bytes.Buffer
	if err := Run("test", 0, &out); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, want := range []string{
		"postern demo: 5 made-up messages",
		"[code hidden]",
		"agent calls " + generated.ToolMailSend,
		generated.ScopeMailSend,
		"<<<mail-text",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the session lacks %q", want)
		}
	}
	if strings.Contains(text, "482913") {
		t.Error("the sign-in code reached the agent")
	}
	left, _ := filepath.Glob(filepath.Join(tmp, "postern-demo-*"))
	if len(left) > 0 {
		t.Fatalf("left behind: %v", left)
	}
	if _, err := os.Stat(filepath.Join(tmp, "xdg_data_home", "postern")); err == nil {
		t.Fatal("the demo wrote into the data folder")
	}
}
