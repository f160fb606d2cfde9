package main

// postern integrations setup HOST --http URL: the host reaches a running postern mcp --http
// at URL with the bearer token of internal/mcphttp, instead of starting a program. The token is
// written into the host's file or command and never shown (integrations.Plan masks it).

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/postern-mcp/postern/integrations"
	"github.com/postern-mcp/postern/internal/termsafe"
)

// notMadeYet stands in for the token in a plan made before there is one; it is masked like
// the token, so the plan reads the same.
const notMadeYet = "postern-http-token-not-made-yet"

func addHTTPFlag(cmd *cobra.Command, f *intFlags) {
	cmd.Flags().StringVar(&f.http, "http", "", "register the URL of a running postern mcp --http (http://127.0.0.1:PORT/mcp) and its bearer token instead of a program to start")
}

// httpOptions reads --http into o for setup or plan: the URL checked, the hosts checked to take
// one, no grant flags (the grant is the server's), and the token (made now when make and there
// is none, else a stand-in, said so).
func (r *intRun) httpOptions(o *integrations.Options, hs []*integrations.Host, make bool) error {
	if r.f.http == "" {
		return nil
	}
	if err := integrations.CheckURL(r.f.http); err != nil {
		return usagef("%v", err)
	}
	for _, n := range []string{"preset", "scopes", "account"} {
		if r.cmd.Flags().Changed(n) {
			return usagef("--%s does not go with --http: the host reaches a running server, whose grant is the one postern mcp --http was started with (pass --scopes there); drop --%s", n, n)
		}
	}
	for _, h := range hs {
		if err := h.TakesURL(); err != nil {
			return usagef("%v", err)
		}
	}
	o.HTTP = r.f.http
	if err := r.token(o, make); err != nil {
		return err
	}
	if o.Token == "" {
		o.Token = notMadeYet
		fmt.Fprintln(r.out, termsafe.Line("There is no HTTP token yet: setup makes it in "+o.TokenFile+", as postern mcp --http would."))
	}
	return nil
}

// token puts the HTTP bearer token into o (integrations.Token) and says when it was made,
// without showing it.
func (r *intRun) token(o *integrations.Options, make bool) error {
	made, err := integrations.Token(o, make)
	if err != nil {
		return err
	}
	if made {
		fmt.Fprintln(r.out, termsafe.Line("Made the HTTP bearer token in "+o.TokenFile+" (readable only by you; postern mcp --http uses the same one); it is never shown."))
	}
	return nil
}
