package dispatch

import (
	"fmt"
	"strings"
	"sync"

	"github.com/postern-mcp/postern/internal/config"
)

// Granter returns a connection's grant at each call: with scopes (postern mcp --scopes), that
// list, parsed once (an unknown scope is an error now); without, the configuration's [mcp]
// scopes as cfg reads them now, so that an edit of the file takes effect at the next call,
// else DefaultGrant when it sets none or cannot be read. A scope of the configuration that is
// not a scope is left out, and warn is told its name once.
func Granter(scopes string, cfg func() (*config.Config, error), warn func(scope string)) (func() Grant, error) {
	if scopes != "" {
		g, err := ParseGrant(scopes)
		if err != nil {
			return nil, err
		}
		return func() Grant { return g }, nil
	}
	warned := map[string]bool{}
	defaults := DefaultGrant()
	var lastCfg *config.Config
	var last Grant
	var mu sync.Mutex
	return func() Grant {
		c, err := cfg()
		if err != nil || len(c.MCP.Scopes) == 0 {
			return defaults
		}
		mu.Lock()
		defer mu.Unlock()
		if c == lastCfg {
			return last // the same configuration grants the same scopes
		}
		g := Grant{}
		for _, s := range c.MCP.Scopes {
			if KnownScope(s) {
				g[s] = true
			} else if !warned[s] {
				warned[s] = true
				if warn != nil {
					warn(s)
				}
			}
		}
		lastCfg, last = c, g
		return g
	}, nil
}

// UnknownScopeWarning is what a server says of a scope its configuration grants that is not one.
func UnknownScopeWarning(scope string) string {
	return fmt.Sprintf("the configuration grants unknown scope %q; it is ignored. Known scopes: %s", scope, strings.Join(ScopeNames(), ", "))
}
