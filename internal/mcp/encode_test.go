package mcp

import (
	"encoding/json"
	"testing"

	"github.com/postern-mcp/postern/internal/dispatch"
	"github.com/postern-mcp/postern/internal/jsonrpc"
)

// TestCallResultBytes: a tools/call answer is written as before encoding/json
// built it: the text escaped as json.Marshal escapes it, the structured
// result as dispatch wrote it, and the members each revision knows.
func TestCallResultBytes(t *testing.T) {
	s := New(Options{Version: "test"})
	meta := string(s.serverInfoMeta)
	res := &dispatch.Result{Text: "a<b>&\"c\"\n\u2028", Structured: json.RawMessage(`{"t":"a<b>&"}`)}
	text := `"a\u003cb\u003e\u0026\"c\"\n\u2028"`
	cases := []struct {
		version string
		id      string
		res     *dispatch.Result
		want    string
	}{
		{"2024-11-05", `1`, res, `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":` + text + `}],"isError":false}}`},
		{"2025-03-26", `1`, res, `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":` + text + `}],"isError":false}}`},
		{"2025-06-18", `"<x>"`, res, `{"jsonrpc":"2.0","id":"<x>","result":{"content":[{"type":"text","text":` + text + `}],"isError":false,"structuredContent":{"t":"a<b>&"}}}`},
		{Modern, `2`, res, `{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":` + text + `}],"isError":false,"structuredContent":{"t":"a<b>&"},"resultType":"complete","_meta":` + meta + `}}`},
		{"2025-11-25", `3`, &dispatch.Result{Text: "no", IsError: true}, `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"no"}],"isError":true}}`},
		{Modern, `4`, &dispatch.Result{Text: "ask", InputRequests: json.RawMessage(`{"approve":{"method":"elicitation/create"}}`), RequestState: "ab.cd"},
			`{"jsonrpc":"2.0","id":4,"result":{"resultType":"input_required","inputRequests":{"approve":{"method":"elicitation/create"}},"requestState":"ab.cd","_meta":` + meta + `}}`},
		// A legacy connection never gets an input_required round.
		{"2025-11-25", `5`, &dispatch.Result{Text: "t", InputRequests: json.RawMessage(`{}`)}, `{"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text","text":"t"}],"isError":false}}`},
	}
	for _, c := range cases {
		req := &request{msg: &jsonrpc.Message{ID: json.RawMessage(c.id)}, rev: lookupRevision(c.version)}
		if got := string(s.callResult(req, c.res, nil)); got != c.want {
			t.Errorf("%s:\ngot  %s\nwant %s", c.version, got, c.want)
		}
	}
}

// TestCallResultLinks: resource links follow the text from 2025-06-18 on; earlier revisions
// and errors carry the text alone, and structuredContent is unchanged.
func TestCallResultLinks(t *testing.T) {
	s := New(Options{Version: "test"})
	res := &dispatch.Result{Text: "t", Structured: json.RawMessage(`{"id":"m1"}`)}
	links := []Resource{{URI: "postern://message/m1", Name: "m1", Title: "A message", MimeType: "text/plain"}}
	link := `{"type":"resource_link","uri":"postern://message/m1","name":"m1","title":"A message","mimeType":"text/plain"}`
	for version, want := range map[string]string{
		"2025-03-26": `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"t"}],"isError":false}}`,
		"2025-06-18": `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"t"},` + link + `],"isError":false,"structuredContent":{"id":"m1"}}}`,
		"2025-11-25": `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"t"},` + link + `],"isError":false,"structuredContent":{"id":"m1"}}}`,
	} {
		req := &request{msg: &jsonrpc.Message{ID: json.RawMessage(`1`)}, rev: lookupRevision(version)}
		if got := string(s.callResult(req, res, links)); got != want {
			t.Errorf("%s:\ngot  %s\nwant %s", version, got, want)
		}
	}
}
