package mcp_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/dispatch"
	"github.com/postern-mcp/postern/internal/mcp"
)

// legacyRevisions is what each initialize-era revision shows, written out here
// rather than read from the server's table.
var legacyRevisions = []struct {
	version                         string
	titles, annotations, structured bool
}{
	{"2024-11-05", false, false, false},
	{"2025-03-26", false, true, false},
	{"2025-06-18", true, true, true},
	{"2025-11-25", true, true, true},
}

func TestLegacyEra(t *testing.T) {
	if len(legacyRevisions) != len(mcp.LegacyVersions) {
		t.Fatalf("the server serves %v; this test knows %d revisions", mcp.LegacyVersions, len(legacyRevisions))
	}
	for i, rv := range legacyRevisions {
		t.Run(rv.version, func(t *testing.T) {
			if mcp.LegacyVersions[i] != rv.version {
				t.Fatalf("LegacyVersions[%d] = %s", i, mcp.LegacyVersions[i])
			}
			s := serve(t, nil)
			// Before initialize: a known method is refused saying what to send, an unknown one is not found.
			if code, e := errCode(t, s.rpc(0, "tools/list", nil)); code != -32602 || !strings.Contains(e["message"].(string), "initialize") {
				t.Fatalf("tools/list before initialize: %v", e)
			}
			if code, _ := errCode(t, s.rpc(0, "nothing/here", nil)); code != -32601 {
				t.Fatalf("unknown method before initialize: %d", code)
			}
			if r := result(t, s.rpc(0, "ping", nil)); len(r) != 0 {
				t.Fatalf("ping = %v", r)
			}
			init := s.initialize(rv.version, nil)
			if init["protocolVersion"] != rv.version {
				t.Fatalf("protocolVersion = %v", init["protocolVersion"])
			}
			info := init["serverInfo"].(map[string]any)
			if _, ok := info["title"]; ok != rv.titles || info["name"] != generated.ServerName || info["version"] != "test" {
				t.Fatalf("serverInfo = %v", info)
			}
			caps := init["capabilities"].(map[string]any)
			if caps["tools"].(map[string]any)["listChanged"] != true {
				t.Fatalf("capabilities = %v", caps)
			}
			tl := result(t, s.rpc(1, "tools/list", nil))
			for _, k := range []string{"resultType", "ttlMs", "cacheScope", "_meta"} {
				if _, ok := tl[k]; ok {
					t.Fatalf("a legacy tools/list carries %s", k)
				}
			}
			tools := tl["tools"].([]any)
			if len(tools) == 0 {
				t.Fatal("no tools listed under the default grant")
			}
			for _, tv := range tools {
				tool := tv.(map[string]any)
				_, title := tool["title"]
				_, out := tool["outputSchema"]
				_, ann := tool["annotations"]
				if title != rv.titles || out != rv.titles || ann != rv.annotations || tool["inputSchema"] == nil {
					t.Fatalf("%s lists %v: title %v outputSchema %v annotations %v", rv.version, tool["name"], title, out, ann)
				}
			}
			call := result(t, s.rpc(2, "tools/call", map[string]any{"name": generated.ToolStatus}))
			sc, has := call["structuredContent"].(map[string]any)
			if has != rv.structured || call["isError"] != false {
				t.Fatalf("tools/call status = %v", call)
			}
			text := call["content"].([]any)[0].(map[string]any)
			if text["type"] != "text" || !strings.Contains(text["text"].(string), rv.version) {
				t.Fatalf("content = %v", text)
			}
			if has && (sc["protocol_era"] != "legacy" || sc["protocol_version"] != rv.version || sc["client"] != "inproc-legacy") {
				t.Fatalf("CallInfo as the tool saw it: %v", sc)
			}
			// Resources: an unknown URI is -32002 in the legacy era.
			rr := result(t, s.rpc(3, "resources/read", map[string]any{"uri": "postern://docs/guide"}))
			if rr["contents"].([]any)[0].(map[string]any)["text"] != "# Guide" {
				t.Fatalf("resources/read = %v", rr)
			}
			if code, _ := errCode(t, s.rpc(4, "resources/read", map[string]any{"uri": "postern://nothing"})); code != mcp.CodeResourceNotFound {
				t.Fatalf("unknown resource: code %d", code)
			}
			// A second initialize is refused and changes nothing.
			if code, _ := errCode(t, s.rpc(5, "initialize", map[string]any{"protocolVersion": "2024-11-05"})); code != -32600 {
				t.Fatalf("second initialize: %d", code)
			}
			if err := s.close(); err != nil {
				t.Fatalf("Serve: %v", err)
			}
		})
	}
}

func TestInitializeUnknownVersion(t *testing.T) {
	s := serve(t, nil)
	if v := s.initialize("1999-01-01", nil)["protocolVersion"]; v != mcp.LatestLegacy {
		t.Fatalf("got %v, want %s", v, mcp.LatestLegacy)
	}
	if code, _ := errCode(t, s.rpc(1, "initialize", map[string]any{})); code != -32600 {
		t.Fatalf("code %d", code)
	}
	s2 := serve(t, nil)
	if code, _ := errCode(t, s2.rpc(1, "initialize", map[string]any{"protocolVersion": 7})); code != -32602 {
		t.Fatalf("a number protocolVersion: code %d", code)
	}
}

func TestModernEra(t *testing.T) {
	s := serve(t, nil)
	d := result(t, s.rpc("server-discover-probe-1", "server/discover", modern(nil)))
	if fmt.Sprint(d["supportedVersions"]) != fmt.Sprint(mcp.Supported) || mcp.Supported[0] != mcp.Modern {
		t.Fatalf("supportedVersions = %v", d["supportedVersions"])
	}
	checkModern(t, d, true)
	tl := result(t, s.rpc(1, "tools/list", modern(nil)))
	checkModern(t, tl, true)
	for _, tv := range tl["tools"].([]any) {
		tool := tv.(map[string]any)
		for _, k := range []string{"title", "outputSchema", "annotations"} {
			if _, ok := tool[k]; !ok {
				t.Fatalf("%v has no %s", tool["name"], k)
			}
		}
	}
	checkModern(t, result(t, s.rpc(2, "resources/list", modern(nil))), true)
	checkModern(t, result(t, s.rpc(3, "resources/read", modern(map[string]any{"uri": "postern://docs/guide"}))), true)
	call := result(t, s.rpc(4, "tools/call", modern(map[string]any{"name": generated.ToolStatus})))
	checkModern(t, call, false)
	if _, ok := call["ttlMs"]; ok {
		t.Fatal("a tools/call result carries ttlMs")
	}
	sc := call["structuredContent"].(map[string]any)
	if sc["protocol_era"] != "modern" || sc["protocol_version"] != mcp.Modern || sc["client"] != "inproc-modern" {
		t.Fatalf("CallInfo as the tool saw it: %v", sc)
	}
	// Methods 2026-07-28 dropped, and unknown ones.
	for _, m := range []string{"ping", "initialize", "server/unknown"} {
		if code, _ := errCode(t, s.rpc(m, m, modern(nil))); code != -32601 {
			t.Fatalf("%s: code %d", m, code)
		}
	}
	// An unknown resource is -32602 here.
	if code, e := errCode(t, s.rpc(5, "resources/read", modern(map[string]any{"uri": "postern://nothing"}))); code != -32602 || e["data"].(map[string]any)["uri"] != "postern://nothing" {
		t.Fatalf("unknown resource: %v", e)
	}
	// A modern request does not initialize the connection for legacy ones.
	if code, _ := errCode(t, s.rpc(6, "tools/list", nil)); code != -32602 {
		t.Fatalf("bare tools/list after modern requests: %d", code)
	}
}

// checkModern asserts what 2026-07-28 puts on every result.
func checkModern(t *testing.T, r map[string]any, cacheable bool) {
	t.Helper()
	meta, _ := r["_meta"].(map[string]any)
	info, _ := meta["io.modelcontextprotocol/serverInfo"].(map[string]any)
	if r["resultType"] != "complete" || info["name"] != generated.ServerName {
		t.Fatalf("resultType %v, _meta %v", r["resultType"], r["_meta"])
	}
	if _, ok := r["ttlMs"].(float64); ok != cacheable || (cacheable && r["cacheScope"] != "private") {
		t.Fatalf("ttlMs %v cacheScope %v (cacheable %v)", r["ttlMs"], r["cacheScope"], cacheable)
	}
}

func TestModernMetaErrors(t *testing.T) {
	s := serve(t, nil)
	withMeta := func(edit func(m map[string]any)) map[string]any {
		p := modern(nil)
		edit(p["_meta"].(map[string]any))
		return p
	}
	code, e := errCode(t, s.rpc(1, "tools/list", withMeta(func(m map[string]any) { m["io.modelcontextprotocol/protocolVersion"] = "2099-01-01" })))
	data, _ := e["data"].(map[string]any)
	if code != -32022 || data["requested"] != "2099-01-01" || fmt.Sprint(data["supported"]) != fmt.Sprint(mcp.Supported) {
		t.Fatalf("unsupported version: %v", e)
	}
	for name, p := range map[string]map[string]any{
		"no clientCapabilities":      withMeta(func(m map[string]any) { delete(m, "io.modelcontextprotocol/clientCapabilities") }),
		"clientCapabilities not {}":  withMeta(func(m map[string]any) { m["io.modelcontextprotocol/clientCapabilities"] = 1 }),
		"no protocolVersion":         withMeta(func(m map[string]any) { delete(m, "io.modelcontextprotocol/protocolVersion") }),
		"protocolVersion not string": withMeta(func(m map[string]any) { m["io.modelcontextprotocol/protocolVersion"] = 20260728 }),
		"clientInfo without name":    withMeta(func(m map[string]any) { m["io.modelcontextprotocol/clientInfo"] = map[string]any{} }),
		"_meta not an object":        {"_meta": "x"},
	} {
		if code, _ := errCode(t, s.rpc(2, "tools/list", p)); code != -32602 {
			t.Errorf("%s: code %d, want -32602", name, code)
		}
	}
	if code, _ := errCode(t, s.rpc(3, "server/discover", nil)); code != -32602 {
		t.Fatalf("server/discover without _meta: %d", code)
	}
	// A legacy revision named in _meta is served as legacy: it needs initialize.
	legacyMeta := withMeta(func(m map[string]any) { m["io.modelcontextprotocol/protocolVersion"] = "2025-06-18" })
	if code, _ := errCode(t, s.rpc(4, "tools/list", legacyMeta)); code != -32602 {
		t.Fatalf("legacy version in _meta: %d", code)
	}
	result(t, s.rpc(5, "tools/list", modern(nil)))
}

func TestBatches(t *testing.T) {
	batch := `[{"jsonrpc":"2.0","id":"b1","method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"},` +
		`{"jsonrpc":"2.0","id":"b2","method":"tools/call","params":{"name":"` + generated.ToolStatus + `"}},` +
		`{"jsonrpc":"2.0","id":"b3","result":{}},{"jsonrpc":"2.0","id":"b4","method":42}]`
	t.Run("2025-03-26", func(t *testing.T) {
		s := serve(t, nil)
		s.initialize("2025-03-26", nil)
		s.send(batch)
		var answers []map[string]any
		if err := json.Unmarshal(s.recvLine(), &answers); err != nil {
			t.Fatal(err)
		}
		if len(answers) != 4 {
			t.Fatalf("answers = %v", answers)
		}
		want := []struct {
			id   string
			code int
		}{{"b1", 0}, {"b2", 0}, {"b3", -32600}, {"b4", -32600}}
		for i, w := range want {
			a := answers[i]
			if a["id"] != w.id {
				t.Fatalf("answer %d = %v", i, a)
			}
			if w.code == 0 {
				result(t, a)
			} else if code, _ := errCode(t, a); code != w.code {
				t.Fatalf("answer %d = %v", i, a)
			}
		}
		s.send(`[]`)
		if code, _ := errCode(t, s.recv()); code != -32600 {
			t.Fatal("an empty batch was not refused")
		}
		// A batch of notifications only is not answered.
		s.send(`[{"jsonrpc":"2.0","method":"notifications/initialized"}]`)
		result(t, s.rpc("after", "ping", nil))
	})
	for _, v := range []string{"", "2024-11-05", "2025-06-18", "2025-11-25"} {
		t.Run("refused "+v, func(t *testing.T) {
			s := serve(t, nil)
			if v != "" {
				s.initialize(v, nil)
			}
			s.send(batch)
			r := s.recv()
			if code, _ := errCode(t, r); code != -32600 || r["id"] != nil {
				t.Fatalf("batch under %q: %v", v, r)
			}
			result(t, s.rpc(7, "ping", nil))
		})
	}
	s := serve(t, nil)
	s.send(`[1,2`)
	if code, _ := errCode(t, s.recv()); code != -32700 {
		t.Fatal("a broken batch is not a parse error")
	}
}

func TestNotificationsNeverAnswered(t *testing.T) {
	s := serve(t, nil)
	s.initialize("2025-11-25", nil)
	for _, n := range []string{
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}}`,
		`{"jsonrpc":"2.0","method":"notifications/whatever","params":{}}`,
		`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"` + generated.ToolStatus + `"}}`,
		`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"` + generated.ToolMailSync + `"}}`,
		`{"jsonrpc":"1.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","method":"x","params":"not an object"}`,
		`{"jsonrpc":"2.0","method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`,
		// A response nobody asked for is not answered either.
		`{"jsonrpc":"2.0","id":"postern-approve-9","result":{"action":"accept"}}`,
	} {
		s.send(n)
	}
	if r := s.rpc("after", "ping", nil); r["result"] == nil {
		t.Fatalf("the first answer after notifications is %v", r)
	}
}

func TestFraming(t *testing.T) {
	s := serve(t, nil)
	s.initialize("2025-11-25", nil)
	big := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"` + strings.Repeat("a", 8<<20) + `"}}`
	s.send(big)
	if code, e := errCode(t, s.recv()); code != -32700 || !strings.Contains(e["message"].(string), "8 MiB") {
		t.Fatalf("oversize line: %v", e)
	}
	s.send("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\",\"params\":{\"x\":\"\xff\"}}")
	if code, e := errCode(t, s.recv()); code != -32700 || !strings.Contains(e["message"].(string), "UTF-8") {
		t.Fatalf("invalid UTF-8: %v", e)
	}
	for _, c := range []struct {
		line string
		code int
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"ping"`, -32700},
		{`"just a string"`, -32600},
		{`{"jsonrpc":"2.0","id":null,"method":"ping"}`, -32600},
		{`{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, -32600},
		{`{"id":2,"method":"ping"}`, -32600},
		{`{"jsonrpc":"2.0","id":4}`, -32600},
		{`{"jsonrpc":"2.0","result":{}}`, -32600},
		{`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":"status"}`, -32600},
		{`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"no_such_tool"}}`, -32602},
		{`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{}}`, -32602},
	} {
		s.send(c.line)
		if code, _ := errCode(t, s.recv()); code != c.code {
			t.Errorf("%s: code %d, want %d", c.line, code, c.code)
		}
	}
	// CRLF line endings and blank lines are fine.
	s.send("\r\n\r\n" + `{"jsonrpc":"2.0","id":8,"method":"ping"}` + "\r")
	result(t, s.recv())
	for _, id := range []string{`0`, `-1`, `1.5`, `1e3`, `9007199254740993`, `""`, `"ü-\u00e9"`, `"<&>"`} {
		s.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}`)
		if l := string(s.recvLine()); !strings.Contains(l, `"id":`+id+`,`) {
			t.Errorf("id %s: answer %s does not echo it as written", id, l)
		}
	}
	if err := s.close(); err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if s.stderr.String() != "" {
		t.Fatalf("stderr: %s", s.stderr.String())
	}
}

// TestCancel: a call that changes something runs on its own goroutine; the
// connection keeps answering, and notifications/cancelled stops it.
func TestCancel(t *testing.T) {
	for _, era := range []string{"legacy", "modern"} {
		t.Run(era, func(t *testing.T) {
			s := serve(t, nil)
			params := map[string]any{"name": generated.ToolMailSync}
			ping := func(id int) {
				if era == "legacy" {
					result(t, s.rpc(id, "ping", nil))
				} else {
					result(t, s.rpc(id, "tools/list", modern(nil)))
				}
			}
			if era == "legacy" {
				s.initialize("2025-11-25", nil)
			} else {
				params = modern(params)
			}
			b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": "sync-1", "method": "tools/call", "params": params})
			s.send(string(b))
			select {
			case <-s.f.syncing:
			case <-time.After(5 * time.Second):
				t.Fatal("mail_sync did not start")
			}
			ping(1) // answered while the sync runs
			s.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"sync-1","reason":"test"}}`)
			r := s.recv()
			res := result(t, r)
			if r["id"] != "sync-1" || res["isError"] != true || !strings.Contains(fmt.Sprint(res["content"]), "cancelled") {
				t.Fatalf("the cancelled call was answered %v", r)
			}
			ping(2)
		})
	}
}

// TestPanics: a handler's panic is an isError result; a panic in the server
// itself is a JSON-RPC internal error; either way the connection stays open.
func TestPanics(t *testing.T) {
	var grantPanics atomic.Bool
	s := serve(t, func(o *mcp.Options) {
		g := o.Grant
		o.Grant = func() dispatch.Grant {
			if grantPanics.Load() {
				panic("the grant fails")
			}
			return g()
		}
	})
	s.initialize("2025-11-25", nil)
	r := result(t, s.rpc(1, "tools/call", map[string]any{"name": generated.ToolMailFolders}))
	if r["isError"] != true || !strings.Contains(fmt.Sprint(r["content"]), "failed unexpectedly") {
		t.Fatalf("a panicking handler was answered %v", r)
	}
	result(t, s.rpc(2, "ping", nil))
	grantPanics.Store(true) // read by the server only while it answers the next request
	for i, p := range []map[string]any{nil, {"name": generated.ToolStatus}, {"name": generated.ToolMailSync}} {
		method := "tools/list"
		if p != nil {
			method = "tools/call"
		}
		if code, e := errCode(t, s.rpc(10+i, method, p)); code != -32603 || !strings.Contains(e["message"].(string), "standard error") {
			t.Fatalf("%s %v: %v", method, p, e)
		}
	}
	grantPanics.Store(false)
	result(t, s.rpc(3, "ping", nil))
	if !strings.Contains(s.stderr.String(), "the grant fails") {
		t.Fatalf("the panic was not logged: %q", s.stderr.String())
	}
}

// TestListChanged: once a legacy client sent notifications/initialized, a grant
// that changes what is listed is told with notifications/tools/list_changed.
func TestListChanged(t *testing.T) {
	s := serve(t, func(o *mcp.Options) { o.Poll = 5 * time.Millisecond })
	s.initialize("2025-11-25", nil)
	wider := dispatch.DefaultGrant()
	wider[generated.ScopeReadBodies] = true
	// Before notifications/initialized nothing is sent.
	s.grant.Store(&wider)
	s.waitGrants(2) // a whole look after the change
	result(t, s.rpc("before", "ping", nil))
	s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	result(t, s.rpc("sync", "ping", nil)) // notifications/initialized was read
	s.waitGrants(2)
	result(t, s.rpc("same", "ping", nil)) // nothing changed since the last look
	narrow := dispatch.DefaultGrant()
	s.grant.Store(&narrow)
	if m := s.recv(); m["method"] != "notifications/tools/list_changed" || m["id"] != nil {
		t.Fatalf("after the grant narrowed: %v", m)
	}
	// read:bodies also gave the message resource template.
	if m := s.recv(); m["method"] != "notifications/resources/list_changed" || m["id"] != nil {
		t.Fatalf("after the grant narrowed: %v", m)
	}
	tl := result(t, s.rpc(1, "tools/list", nil))
	for _, tv := range tl["tools"].([]any) {
		if tv.(map[string]any)["name"] == generated.ToolMailShow {
			t.Fatal("the narrowed grant still lists mail_show")
		}
	}
}
