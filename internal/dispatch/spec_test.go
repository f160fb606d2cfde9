package dispatch

import (
	"encoding/json"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/postern-mcp/postern/generated"
)

// TestSpecArgs: the argument facts the generator states in ToolSpec are what
// the embedded input schema and the argument struct say, for every tool.
func TestSpecArgs(t *testing.T) {
	for _, spec := range generated.Tools {
		b, err := generated.Files.ReadFile(spec.InputSchema)
		if err != nil {
			t.Fatal(err)
		}
		var s struct {
			Properties map[string]json.RawMessage `json:"properties"`
		}
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatal(err)
		}
		var props []string
		for k := range s.Properties {
			props = append(props, k)
		}
		sort.Strings(props)
		if !slices.Equal(props, spec.Args) {
			t.Errorf("%s: Args %v, the input schema has %v", spec.Name, spec.Args, props)
		}
		var free []string
		at := reflect.TypeOf(spec.NewArgs()).Elem()
		for i := 0; i < at.NumField(); i++ {
			if at.Field(i).Tag.Get("audit") == "free_text" {
				name, _, _ := strings.Cut(at.Field(i).Tag.Get("json"), ",")
				free = append(free, name)
			}
		}
		sort.Strings(free)
		if !slices.Equal(free, spec.FreeText) {
			t.Errorf("%s: FreeText %v, the argument struct tags %v", spec.Name, spec.FreeText, free)
		}
	}
}
