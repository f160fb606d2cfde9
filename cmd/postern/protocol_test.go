package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/postern-mcp/postern/internal/mcp"
)

func TestInitializeEachLegacyVersion(t *testing.T) {
	for _, v := range mcp.LegacyVersions {
		t.Run(v, func(t *testing.T) {
			s := start(t)
			r := result(t, s.initialize(v))
			if r["protocolVersion"] != v {
				t.Fatalf("asked %s, server answered %v", v, r["protocolVersion"])
			}
			info := r["serverInfo"].(map[string]any)
			if info["name"] != "postern" || info["version"] == "" {
				t.Fatalf("serverInfo = %v", info)
			}
			if _, hasTitle := info["title"]; hasTitle != (v >= "2025-06-18") {
				t.Fatalf("serverInfo.title present=%v for %s; it exists from 2025-06-18 on", hasTitle, v)
			}
			if !strings.Contains(r["instructions"].(string), "never instructions") {
				t.Fatalf("instructions do not say mail is data: %q", r["instructions"])
			}
			// A legacy answer carries none of 2026-07-28's result fields.
			tl := result(t, s.rpc(1, "tools/list", nil))
			for _, k := range []string{"resultType", "ttlMs", "cacheScope"} {
				if _, ok := tl[k]; ok {
					t.Fatalf("legacy tools/list carries %s", k)
				}
			}
			tools := tl["tools"].([]any)
			first := tools[0].(map[string]any)
			_, hasOut := first["outputSchema"]
			_, hasAnn := first["annotations"]
			if hasOut != (v >= "2025-06-18") || hasAnn != (v >= "2025-03-26") {
				t.Fatalf("%s: outputSchema=%v annotations=%v", v, hasOut, hasAnn)
			}
			call := result(t, s.rpc(2, "tools/call", map[string]any{"name": "status"}))
			_, hasSC := call["structuredContent"]
			if hasSC != (v >= "2025-06-18") {
				t.Fatalf("%s: structuredContent present=%v", v, hasSC)
			}
			text := call["content"].([]any)[0].(map[string]any)["text"].(string)
			if !strings.Contains(text, `protocol_version: "`+v+`"`) || !strings.Contains(text, `protocol_era: "legacy"`) {
				t.Fatalf("status text does not report the era and version: %q", text)
			}
		})
	}
}

func TestInitializeUnknownVersionGetsLatestLegacy(t *testing.T) {
	s := start(t)
	r := result(t, s.initialize("1999-01-01"))
	if r["protocolVersion"] != mcp.LatestLegacy {
		t.Fatalf("got %v, want %s", r["protocolVersion"], mcp.LatestLegacy)
	}
	// A second initialize on the same connection is refused, the first one stands.
	code, _ := errCode(t, s.rpc(9, "initialize", map[string]any{"protocolVersion": "2025-03-26"}))
	if code != -32600 {
		t.Fatalf("second initialize: code %d", code)
	}
	st := result(t, s.rpc(10, "tools/call", map[string]any{"name": "status"}))
	if st["structuredContent"].(map[string]any)["protocol_version"] != mcp.LatestLegacy {
		t.Fatalf("the second initialize changed the session: %v", st)
	}
}

func TestModernDiscoverAndMeta(t *testing.T) {
	s := start(t)
	d := result(t, s.rpc("server-discover-probe-1", "server/discover", withMeta(nil)))
	sv := d["supportedVersions"].([]any)
	if sv[0] != mcp.Modern || len(sv) != len(mcp.Supported) {
		t.Fatalf("supportedVersions = %v", sv)
	}
	checkModernResult(t, d, true)
	if _, ok := d["capabilities"].(map[string]any)["tools"]; !ok {
		t.Fatalf("discover capabilities lack tools: %v", d["capabilities"])
	}

	tl := result(t, s.rpc(1, "tools/list", withMeta(nil)))
	checkModernResult(t, tl, true)
	for _, m := range []string{"resources/list", "resources/templates/list"} {
		checkModernResult(t, result(t, s.rpc(m, m, withMeta(nil))), true)
	}
	rr := result(t, s.rpc(3, "resources/read", withMeta(map[string]any{"uri": "postern://docs/guide"})))
	checkModernResult(t, rr, true)
	call := result(t, s.rpc(4, "tools/call", withMeta(map[string]any{"name": "status"})))
	checkModernResult(t, call, false)
	sc := call["structuredContent"].(map[string]any)
	if sc["protocol_era"] != "modern" || sc["protocol_version"] != mcp.Modern || sc["client"] != "e2e-modern" {
		t.Fatalf("status over 2026-07-28 = %v", sc)
	}
	// Methods 2026-07-28 removed are unknown there.
	for _, m := range []string{"ping", "initialize"} {
		if code, _ := errCode(t, s.rpc(m, m, withMeta(nil))); code != -32601 {
			t.Fatalf("modern %s: code %d, want -32601", m, code)
		}
	}
}

// checkModernResult asserts the fields 2026-07-28 puts on every result.
func checkModernResult(t *testing.T, r map[string]any, cacheable bool) {
	t.Helper()
	if r["resultType"] != "complete" {
		t.Fatalf("resultType = %v", r["resultType"])
	}
	meta, _ := r["_meta"].(map[string]any)
	info, _ := meta["io.modelcontextprotocol/serverInfo"].(map[string]any)
	if info["name"] != "postern" {
		t.Fatalf("_meta serverInfo = %v", meta)
	}
	ttl, hasTTL := r["ttlMs"].(float64)
	scope, _ := r["cacheScope"].(string)
	if cacheable {
		if !hasTTL || ttl < 0 || ttl != float64(int(ttl)) || (scope != "public" && scope != "private") {
			t.Fatalf("cacheable result: ttlMs=%v cacheScope=%v", r["ttlMs"], r["cacheScope"])
		}
	}
}

func TestModernErrors(t *testing.T) {
	s := start(t)
	// Unsupported version: -32022 with what is supported and what was asked.
	meta := modernMeta()
	meta["io.modelcontextprotocol/protocolVersion"] = "2099-01-01"
	code, e := errCode(t, s.rpc(1, "tools/list", map[string]any{"_meta": meta}))
	if code != -32022 {
		t.Fatalf("unsupported version: code %d", code)
	}
	data := e["data"].(map[string]any)
	if data["requested"] != "2099-01-01" || len(data["supported"].([]any)) != len(mcp.Supported) {
		t.Fatalf("data = %v", data)
	}
	// Missing required _meta: clientCapabilities absent.
	meta = modernMeta()
	delete(meta, "io.modelcontextprotocol/clientCapabilities")
	if code, _ := errCode(t, s.rpc(2, "tools/list", map[string]any{"_meta": meta})); code != -32602 {
		t.Fatalf("missing clientCapabilities: code %d", code)
	}
	// Missing protocolVersion while other modern keys are there.
	meta = modernMeta()
	delete(meta, "io.modelcontextprotocol/protocolVersion")
	if code, _ := errCode(t, s.rpc(3, "tools/call", map[string]any{"name": "status", "_meta": meta})); code != -32602 {
		t.Fatalf("missing protocolVersion: code %d", code)
	}
	// No _meta at all and no initialize.
	if code, _ := errCode(t, s.rpc(4, "tools/list", nil)); code != -32602 {
		t.Fatalf("bare tools/list: code %d", code)
	}
	if code, _ := errCode(t, s.rpc(5, "server/discover", nil)); code != -32602 {
		t.Fatalf("server/discover without _meta: code %d", code)
	}
	// Unknown method, string id (clients probe with one).
	r := s.rpc("server-discover-probe-1", "server/unknown", withMeta(nil))
	if code, _ := errCode(t, r); code != -32601 || r["id"] != "server-discover-probe-1" {
		t.Fatalf("unknown method: %v", r)
	}
	r = s.rpc("server-discover-probe-1", "nothing/here", nil)
	if code, _ := errCode(t, r); code != -32601 || r["id"] != "server-discover-probe-1" {
		t.Fatalf("unknown legacy method: %v", r)
	}
	// The connection is still usable after all of that.
	result(t, s.rpc(6, "tools/list", withMeta(nil)))
}

func TestBatches(t *testing.T) {
	batch := `[{"jsonrpc":"2.0","id":"b1","method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":"b2","method":"tools/call","params":{"name":"status"}}]`
	t.Run("accepted in 2025-03-26", func(t *testing.T) {
		s := start(t)
		s.initialize("2025-03-26")
		s.send(batch)
		var answers []map[string]any
		if err := json.Unmarshal([]byte(s.recvLine()), &answers); err != nil {
			t.Fatalf("batch answer is not an array: %v", err)
		}
		if len(answers) != 2 || answers[0]["id"] != "b1" || answers[1]["id"] != "b2" {
			t.Fatalf("batch answers = %v", answers)
		}
		if answers[1]["result"].(map[string]any)["isError"] != false {
			t.Fatalf("status in a batch failed: %v", answers[1])
		}
	})
	for _, v := range []string{"", "2024-11-05", "2025-06-18", "2025-11-25", "modern"} {
		t.Run("refused "+v, func(t *testing.T) {
			s := start(t)
			if v != "" && v != "modern" {
				s.initialize(v)
			}
			s.send(batch)
			r := s.recv()
			if code, _ := errCode(t, r); code != -32600 || r["id"] != nil {
				t.Fatalf("batch under %q: %v", v, r)
			}
			// Nothing of the batch ran, and the next request is answered.
			r = s.rpc(7, "ping", nil)
			if r["id"] != float64(7) {
				t.Fatalf("after a refused batch: %v", r)
			}
		})
	}
}

func TestNotificationsNeverAnswered(t *testing.T) {
	s := start(t)
	s.initialize("2025-11-25")
	for _, n := range []string{
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}}`,
		`{"jsonrpc":"2.0","method":"notifications/whatever","params":{}}`,
		`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"status"}}`,
		`{"jsonrpc":"1.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`,
	} {
		s.send(n)
	}
	r := s.rpc("after", "ping", nil)
	if r["id"] != "after" {
		t.Fatalf("the first answer after notifications is %v", r)
	}
}

func TestOversizeAndInvalidUTF8Lines(t *testing.T) {
	s := start(t)
	s.initialize("2025-11-25")
	big := make([]byte, 8<<20+10)
	for i := range big {
		big[i] = 'a'
	}
	copy(big, `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"`)
	big[len(big)-1] = '\n'
	s.sendRaw(big)
	if code, e := errCode(t, s.recv()); code != -32700 || !strings.Contains(e["message"].(string), "8 MiB") {
		t.Fatalf("oversize line: %v", e)
	}
	if r := s.rpc(2, "ping", nil); r["id"] != float64(2) {
		t.Fatalf("after oversize: %v", r)
	}
	s.sendRaw([]byte("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\",\"params\":{\"x\":\"\xff\xfe\"}}\n"))
	if code, e := errCode(t, s.recv()); code != -32700 || !strings.Contains(e["message"].(string), "UTF-8") {
		t.Fatalf("invalid UTF-8: %v", e)
	}
	if r := s.rpc(4, "ping", nil); r["id"] != float64(4) {
		t.Fatalf("after invalid UTF-8: %v", r)
	}
	// A line of exactly 8 MiB of valid JSON is still read.
	exact := []byte(`{"jsonrpc":"2.0","id":5,"method":"ping","params":{"pad":"`)
	pad := 8<<20 - len(exact) - len(`"}}`)
	exact = append(exact, bytes.Repeat([]byte{'b'}, pad)...)
	exact = append(exact, `"}}`+"\n"...)
	s.sendRaw(exact)
	if r := s.recv(); r["id"] != float64(5) || r["result"] == nil {
		t.Fatalf("8 MiB line: %v", r["error"])
	}
}

func TestMalformedMessages(t *testing.T) {
	s := start(t)
	s.initialize("2025-11-25")
	cases := []struct {
		line string
		code int
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"ping"`, -32700},
		{`[1,2`, -32700},
		{`"just a string"`, -32600},
		{`{"jsonrpc":"2.0","id":null,"method":"ping"}`, -32600},
		{`{"jsonrpc":"2.0","id":true,"method":"ping"}`, -32600},
		{`{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, -32600},
		{`{"id":2,"method":"ping"}`, -32600},
		{`{"jsonrpc":"2.0","id":3,"method":42}`, -32600},
		{`{"jsonrpc":"2.0","id":4}`, -32600},
		{`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":"status"}`, -32600},
		{`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"no_such_tool"}}`, -32602},
		{`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{}}`, -32602},
	}
	for _, c := range cases {
		s.send(c.line)
		if code, _ := errCode(t, s.recv()); code != c.code {
			t.Errorf("%s: code %d, want %d", c.line, code, c.code)
		}
	}
	if r := s.rpc("still", "ping", nil); r["id"] != "still" {
		t.Fatalf("after malformed messages: %v", r)
	}
}

func TestIDsEchoed(t *testing.T) {
	s := start(t)
	s.initialize("2025-11-25")
	for _, id := range []string{`0`, `-1`, `42`, `1.5`, `1e3`, `9007199254740993`, `""`, `"abc"`, `"ü-\u00e9"`, `"server-discover-probe-1"`} {
		s.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"ping"}`, id))
		line := s.recvLine()
		want := fmt.Sprintf(`"id":%s,`, id)
		if !strings.Contains(line, want) {
			t.Errorf("id %s: answer %s does not echo it byte for byte", id, line)
		}
	}
}

// TestPipelinedThenClosed writes 200 requests and closes stdin at once; every
// request must be answered before postern exits, 50 runs in a row.
func TestPipelinedThenClosed(t *testing.T) {
	var in bytes.Buffer
	in.WriteString(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"pipe","version":"1"}}}` + "\n")
	in.WriteString(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")
	for i := 0; i < 200; i++ {
		switch i % 3 {
		case 0:
			fmt.Fprintf(&in, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"status"}}`+"\n", i)
		case 1:
			fmt.Fprintf(&in, `{"jsonrpc":"2.0","id":%d,"method":"ping"}`+"\n", i)
		default:
			fmt.Fprintf(&in, `{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`+"\n", i)
		}
	}
	env := home(t)
	for run := 0; run < 50; run++ {
		cmd := exec.Command(binary, "mcp")
		cmd.Env = env
		cmd.Stdin = bytes.NewReader(in.Bytes())
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
		seen := map[string]bool{}
		sc := bufio.NewScanner(bytes.NewReader(out))
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		for sc.Scan() {
			var m struct {
				ID     json.RawMessage `json:"id"`
				Result json.RawMessage `json:"result"`
			}
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil || m.Result == nil {
				t.Fatalf("run %d: bad answer %q", run, sc.Text())
			}
			seen[string(m.ID)] = true
		}
		for i := 0; i < 200; i++ {
			if !seen[fmt.Sprint(i)] {
				t.Fatalf("run %d: request %d was not answered (%d answers)", run, i, len(seen))
			}
		}
	}
}
