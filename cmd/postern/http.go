package main

import (
	"errors"
	"fmt"
	"io"
	"net"

	"github.com/spf13/cobra"

	"github.com/postern-mcp/postern/internal/mcp"
	"github.com/postern-mcp/postern/internal/mcphttp"
	"github.com/postern-mcp/postern/internal/server"
)

// httpFlags are postern mcp's flags for Streamable HTTP.
type httpFlags struct {
	addr      string
	listenAny bool
}

func (h *httpFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&h.addr, "http", "", "serve MCP over Streamable HTTP on this address (127.0.0.1:PORT) instead of standard input and output")
	fl.BoolVar(&h.listenAny, "listen-any", false, "with --http, allow an address beyond loopback (other machines can then reach it; the bearer token is still required)")
}

// cmdMCPHTTP serves the same server as cmdMCP over Streamable HTTP until a signal.
func cmdMCPHTTP(f *serverFlags, h *httpFlags, stderr io.Writer) error {
	if h.listenAny && h.addr == "" {
		return errors.New("--listen-any goes with --http ADDRESS; pass both, or neither to serve standard input and output")
	}
	if err := mcphttp.CheckAddr(h.addr, h.listenAny); err != nil {
		return err
	}
	token, made, err := mcphttp.Token()
	if err != nil {
		return err
	}
	svc, reg, grant, err := f.setup(stderr)
	if err != nil {
		return err
	}
	defer reg.Close() // the audit lines still queued
	l, err := net.Listen("tcp", h.addr)
	if err != nil {
		return fmt.Errorf("cannot listen on %s: %w; pick another port", h.addr, err)
	}
	url := "http://" + l.Addr().String() + mcphttp.Path
	if made {
		fmt.Fprintf(stderr, "postern: made the HTTP bearer token, shown this once (kept in %s, readable only by you):\n%s\n", mcphttp.TokenPath(), token)
	}
	fmt.Fprintf(stderr, "postern: serving MCP at %s (give the host this URL and the header Authorization: Bearer with the token in %s)\n", url, mcphttp.TokenPath())
	handler := mcphttp.New(mcphttp.Options{
		Server:  mcp.Options{Registry: reg, Resources: svc, Grant: grant, Version: postVersion(), Stderr: stderr},
		Token:   token,
		AnyHost: h.listenAny,
		Stderr:  stderr,
	})
	return server.ServeHTTP(l, handler, handler.Close)
}
