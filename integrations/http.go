package integrations

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// A URL entry points a host at a running postern mcp --http instead of a program it starts:
// the URL and the header Authorization: Bearer TOKEN, in the shape the catalog declares for the
// host (generated.HostSpec.HTTP). The token is the person's secret: it is written into the
// host's file and into a cli host's command, and never shown (Plan.Describe, planJSON, Apply's
// lines and errors replace it; see mask).

// Mask is what is shown in place of the bearer token.
const Mask = "••••"

// CheckURL refuses a --http URL that is not postern's on this machine: http or https, a
// loopback host (localhost, 127.0.0.1 or [::1]) with a port, a path, no user, query or fragment.
func CheckURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("--http %s is not an http:// or https:// URL; pass the one postern mcp --http prints, for example http://127.0.0.1:8765/mcp", raw)
	}
	host := u.Hostname()
	if ip := net.ParseIP(host); !(strings.EqualFold(host, "localhost") || ip != nil && ip.IsLoopback()) {
		return fmt.Errorf("--http %s is not on this machine; a host is registered only with a postern at http://127.0.0.1:PORT/mcp or http://localhost:PORT/mcp", raw)
	}
	if u.Port() == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.Path == "" || u.Path == "/" {
		return fmt.Errorf("--http %s is not the server's URL; pass it as postern mcp --http prints it, http://127.0.0.1:PORT/mcp", raw)
	}
	return nil
}

// TakesURL refuses h for --http with its own reason, naming the hosts that take a URL.
func (h *Host) TakesURL() error {
	if h.HTTP != nil {
		return nil
	}
	var ids []string
	for _, o := range Hosts() {
		if o.HTTP != nil {
			ids = append(ids, o.ID)
		}
	}
	return fmt.Errorf("%s takes no --http URL: %s; the hosts that do are %s", h.Name, h.NoHTTP, strings.Join(ids, ", "))
}

// shape is the entry shape h writes e in: its URL shape for a URL entry.
func (h *Host) shape(e Entry) string {
	if e.URL != "" && h.HTTP != nil {
		return "url:" + h.HTTP.Entry
	}
	return h.Entry
}

// urlValue is the JSON of a URL entry by shape (catalog hosts' http.entry), keys in the order
// the hosts' own docs write them.
func urlValue(shape string, e Entry) any {
	headers := map[string]string{"Authorization": "Bearer " + e.Token}
	switch shape {
	case "url":
		return struct {
			URL     string            `json:"url"`
			Headers map[string]string `json:"headers"`
		}{e.URL, headers}
	case "server-url":
		return struct {
			ServerURL string            `json:"serverUrl"`
			Headers   map[string]string `json:"headers"`
		}{e.URL, headers}
	case "remote":
		return struct {
			Type    string            `json:"type"`
			URL     string            `json:"url"`
			Headers map[string]string `json:"headers"`
			Enabled bool              `json:"enabled"`
		}{"remote", e.URL, headers, true}
	default: // http
		return struct {
			Type    string            `json:"type"`
			URL     string            `json:"url"`
			Headers map[string]string `json:"headers"`
		}{"http", e.URL, headers}
	}
}

// parseURLEntry reads a URL entry (url, httpUrl or serverUrl, and the Authorization header)
// from its JSON; ok is false when raw is not one.
func parseURLEntry(raw []byte) (Entry, bool) {
	var v struct {
		URL       string            `json:"url"`
		HTTPURL   string            `json:"httpUrl"`
		ServerURL string            `json:"serverUrl"`
		Headers   map[string]string `json:"headers"`
		Command   json.RawMessage   `json:"command"`
	}
	if json.Unmarshal(raw, &v) != nil || len(v.Command) > 0 {
		return Entry{}, false
	}
	u := v.URL
	if u == "" {
		u = v.HTTPURL
	}
	if u == "" {
		u = v.ServerURL
	}
	if u == "" {
		return Entry{}, false
	}
	e := Entry{URL: u}
	for k, val := range v.Headers {
		if strings.EqualFold(k, "Authorization") {
			if scheme, tok, ok := strings.Cut(strings.TrimSpace(val), " "); ok && strings.EqualFold(scheme, "Bearer") {
				e.Token = strings.TrimSpace(tok)
			}
		}
	}
	return e, true
}

// header is the Authorization header of a URL entry, one word for a host's command line.
func (e Entry) header() string { return "Authorization: Bearer " + e.Token }

// mask replaces the secret in s with Mask.
func mask(s, secret string) string {
	if secret == "" {
		return s
	}
	return strings.ReplaceAll(s, secret, Mask)
}

// shellJoinSecret is shellJoin for a command holding the secret: a word with it is written in
// double quotes with $(cat FILE) in its place, so that the command can be pasted and run as
// shown without the token ever being printed.
func shellJoinSecret(words []string, secret, file string) string {
	if secret == "" {
		return shellJoin(words)
	}
	out := make([]string, len(words))
	for i, w := range words {
		if !strings.Contains(w, secret) {
			out[i] = shellQuote(w)
			continue
		}
		src := Mask
		if file != "" {
			src = "$(cat " + shellQuote(file) + ")"
		}
		parts := strings.Split(w, secret)
		for j, p := range parts {
			parts[j] = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "$", `\$`, "`", "\\`").Replace(mask(p, secret))
		}
		out[i] = `"` + strings.Join(parts, src) + `"`
	}
	return strings.Join(out, " ")
}

// probeURL asks the server at e.URL to initialize with e's token. running is false when nothing
// listens there (the server is not started now: not a fault of the registration).
func probeURL(ctx context.Context, e Entry) (running bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"postern-doctor","version":"1"}}}`
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.URL, bytes.NewReader([]byte(body)))
	if err != nil {
		return false, fmt.Errorf("the URL cannot be asked: %v", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+e.Token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		if errors.Is(err, syscall.ECONNREFUSED) {
			return false, nil
		}
		return false, fmt.Errorf("nothing answered at %s: %s", e.URL, mask(err.Error(), e.Token))
	}
	defer resp.Body.Close()
	if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" { // end the session it made
		defer func() {
			del, _ := http.NewRequest(http.MethodDelete, e.URL, nil)
			del.Header.Set("Mcp-Session-Id", sid)
			del.Header.Set("Authorization", "Bearer "+e.Token)
			if r, err := http.DefaultClient.Do(del); err == nil {
				r.Body.Close()
			}
		}()
	}
	switch {
	case resp.StatusCode == http.StatusUnauthorized:
		return true, fmt.Errorf("the server at %s refuses the entry's token (401); the token file changed since that server started: restart postern mcp --http", e.URL)
	case resp.StatusCode != http.StatusOK:
		return true, fmt.Errorf("the server at %s answered %s to initialize", e.URL, resp.Status)
	}
	return true, nil
}
