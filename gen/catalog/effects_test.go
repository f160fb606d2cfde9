package catalog

import (
	"encoding/json"
	"os"
	"slices"
	"testing"
)

// TestEffectsMatchSchema: the effects the generator emits constants for are
// exactly the enum the catalog schema accepts, in the same order.
func TestEffectsMatchSchema(t *testing.T) {
	b, err := os.ReadFile("../../catalog/" + SchemaFile)
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Properties struct {
			Tools struct {
				Items struct {
					Properties struct {
						Effect struct {
							Enum []string `json:"enum"`
						} `json:"effect"`
					} `json:"properties"`
				} `json:"items"`
			} `json:"tools"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	want := s.Properties.Tools.Items.Properties.Effect.Enum
	var got []string
	for _, e := range Effects {
		got = append(got, e.Name)
	}
	if len(want) == 0 || !slices.Equal(got, want) {
		t.Errorf("Effects = %v; the schema's effect enum is %v", got, want)
	}
}

// TestConstName: names split on ':' and '_', initialisms in capitals.
func TestConstName(t *testing.T) {
	for _, c := range [][3]string{
		{"Tool", "mail_search", "ToolMailSearch"},
		{"Tool", "mail_draft_commit", "ToolMailDraftCommit"},
		{"Scope", "read", "ScopeRead"},
		{"Scope", "read:bodies", "ScopeReadBodies"},
		{"Scope", "mail:send", "ScopeMailSend"},
		{"Effect", "local_write", "EffectLocalWrite"},
		{"Preset", "reader", "PresetReader"},
	} {
		if got := ConstName(c[0], c[1]); got != c[2] {
			t.Errorf("ConstName(%q, %q) = %s, want %s", c[0], c[1], got, c[2])
		}
	}
}
