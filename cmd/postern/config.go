package main

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/postern-mcp/postern/internal/status"
	"github.com/postern-mcp/postern/internal/termsafe"
)

func newConfigCmd(stdout, stderr io.Writer) *cobra.Command {
	var cfgPath string
	check := &cobra.Command{
		Use:   "check",
		Short: "check the configuration: one line per problem, exit 1 if any",
		Long: `Check the configuration file without connecting anywhere: that it parses, that
every account is complete (server, user, a password command that is installed,
a valid --tls, a readable tls_ca file, a Maildir that exists), that [mcp] scopes
and the hosts registered by postern integrations setup name only scopes that
exist and accounts that are configured. It prints one line per problem, each
saying what to do, and exits 1; or "no problems" and exits 0. A missing file is
an empty configuration, which has no problems.`,
		Example: "  postern config check\n  postern config check --config ./config.toml",
		Args:    noArgs,
		RunE: func(_ *cobra.Command, _ []string) error {
			path := cfgPath
			if abs, err := filepath.Abs(path); err == nil {
				path = abs
			}
			cfg, problems := status.Problems(path)
			if cfg != nil {
				// What postern ignores (a field the account's kind does not read) is said, and
				// fails nothing.
				for _, n := range cfg.Notices() {
					fmt.Fprintln(stdout, "note: "+termsafe.Line(n))
				}
			}
			if len(problems) == 0 {
				fmt.Fprintf(stdout, "%s: no problems\n", termsafe.Line(path))
				return nil
			}
			for _, p := range problems {
				fmt.Fprintln(stderr, "postern: "+termsafe.Line(p))
			}
			return exitError{1}
		},
	}
	addConfigFlag(check, &cfgPath)
	return group("config", "check the configuration file",
		`Commands about postern's configuration file (by default
$XDG_CONFIG_HOME/postern/config.toml). Accounts are changed with postern account.`, check)
}
