package mcp_test

import (
	"bytes"
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/postern-mcp/postern/internal/audit"
	"github.com/postern-mcp/postern/internal/config"
	"github.com/postern-mcp/postern/internal/dispatch"
	"github.com/postern-mcp/postern/internal/mcp"
	"github.com/postern-mcp/postern/internal/tools"
)

// BenchmarkServeStatus measures the CPU work of one tools/call status through
// the whole server, without the pipes (cmd/postern-bench measures those).
func BenchmarkServeStatus(b *testing.B) { benchStatus(b, false) }

// BenchmarkServeStatusAudit is BenchmarkServeStatus with the audit log on, as
// postern mcp runs.
func BenchmarkServeStatusAudit(b *testing.B) { benchStatus(b, true) }

func benchStatus(b *testing.B, withAudit bool) {
	svc := &tools.Service{Version: "bench", Config: config.NewWatcher(filepath.Join(b.TempDir(), "none.toml"))}
	reg, err := dispatch.New(svc)
	if err != nil {
		b.Fatal(err)
	}
	if withAudit {
		reg.SetAudit(audit.Open(b.TempDir(), nil))
	}
	g := dispatch.DefaultGrant()
	srv := mcp.New(mcp.Options{Registry: reg, Resources: svc, Grant: func() dispatch.Grant { return g }, Version: "bench", Stderr: io.Discard})
	var in bytes.Buffer
	in.WriteString(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"b","version":"1"}}}` + "\n")
	line := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"status"}}` + "\n"
	in.WriteString(strings.Repeat(line, b.N))
	b.ResetTimer()
	if err := srv.Serve(context.Background(), &in, io.Discard); err != nil {
		b.Fatal(err)
	}
	reg.Close()
}
