package dispatch

import (
	"fmt"
	"strings"

	"github.com/postern-mcp/postern/internal/search"
)

// UnknownTool is the error for a tool name r lacks (postern call): the nearest names, then
// every tool.
func (r *Registry) UnknownTool(name string) error {
	var names []string
	for _, t := range r.tools {
		names = append(names, t.Spec.Name)
	}
	msg := fmt.Sprintf("unknown tool %q", name)
	if near := search.Nearest(name, names); len(near) > 0 {
		msg += "; did you mean " + strings.Join(near, " or ") + "?"
	}
	return fmt.Errorf("%s The tools are %s", msg, strings.Join(names, ", "))
}
