// Package oauthtest is an OAuth2 authorization server for tests, on 127.0.0.1 (Go's httptest):
// an authorisation endpoint that approves at once (as a person clicking "allow" would) and
// sends the browser back with a code, a token endpoint (authorization code with PKCE S256,
// refresh token) issuing access tokens that expire, and an RFC 7662 introspection endpoint
// that a test Dovecot's oauth2 passdb asks (imaptest.Options.OAuth2IntrospectionURL). A test
// can expire access tokens and revoke refresh tokens. It never reaches beyond the machine.
package oauthtest

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"
)

// Server is a running authorization server.
type Server struct {
	URL      string // http://127.0.0.1:PORT
	ClientID string // the only client it knows
	// ClientSecret, when set, must come with every token request.
	ClientSecret string

	mu        sync.Mutex
	user      string // who approves the next authorisation
	expiresIn int    // seconds, given with each access token
	codes     map[string]grant
	access    map[string]token
	refresh   map[string]string // refresh token → user
	secrets   []string
	refreshes int // refresh grants answered with a token
	refused   int // introspections that said inactive
}

type grant struct{ user, challenge, redirect string }

type token struct {
	user    string
	expires time.Time
	dead    bool // expired by the test
}

// Start runs a server for tb, stopped by its cleanup.
func Start(tb testing.TB) *Server {
	tb.Helper()
	s := &Server{ClientID: "postern-test-client", expiresIn: 3600,
		codes: map[string]grant{}, access: map[string]token{}, refresh: map[string]string{}}
	mux := http.NewServeMux()
	mux.HandleFunc("/authorize", s.authorize)
	mux.HandleFunc("/token", s.token)
	mux.HandleFunc("/introspect", s.introspect)
	hs := httptest.NewServer(mux)
	tb.Cleanup(hs.Close)
	s.URL = hs.URL
	return s
}

// AuthURL and TokenURL are the endpoints; IntrospectURL is the one Dovecot asks.
func (s *Server) AuthURL() string       { return s.URL + "/authorize" }
func (s *Server) TokenURL() string      { return s.URL + "/token" }
func (s *Server) IntrospectURL() string { return s.URL + "/introspect" }

// ApproveAs makes the next authorisations be approved by user (the mail login).
func (s *Server) ApproveAs(user string) { s.mu.Lock(); s.user = user; s.mu.Unlock() }

// SetExpiresIn is the lifetime given with the access tokens issued from now on.
func (s *Server) SetExpiresIn(d time.Duration) {
	s.mu.Lock()
	s.expiresIn = int(d / time.Second)
	s.mu.Unlock()
}

// Issue makes an access token for user directly (as a token helper would get one).
func (s *Server) Issue(user string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.newAccess(user)
}

// ExpireAccess makes every access token issued so far inactive, although the clients were told
// they had time left (as a provider that ends them early does).
func (s *Server) ExpireAccess() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, t := range s.access {
		t.dead = true
		s.access[k] = t
	}
}

// RevokeRefresh revokes every refresh token issued so far.
func (s *Server) RevokeRefresh() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.refresh)
}

// Refreshes is how many refresh grants were answered with a new access token.
func (s *Server) Refreshes() int { s.mu.Lock(); defer s.mu.Unlock(); return s.refreshes }

// Refused is how many introspections said a token was not active.
func (s *Server) Refused() int { s.mu.Lock(); defer s.mu.Unlock(); return s.refused }

// Secrets are every code and token the server issued, for scans that they appear nowhere.
func (s *Server) Secrets() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.secrets...)
}

func (s *Server) random(prefix string) string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	v := prefix + hex.EncodeToString(b)
	s.secrets = append(s.secrets, v)
	return v
}

func (s *Server) newAccess(user string) string {
	v := s.random("at-")
	s.access[v] = token{user: user, expires: time.Now().Add(time.Duration(s.expiresIn) * time.Second)}
	return v
}

func (s *Server) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	s.mu.Lock()
	defer s.mu.Unlock()
	redirect, err := url.Parse(q.Get("redirect_uri"))
	if err != nil || redirect.Scheme != "http" || redirect.Hostname() != "127.0.0.1" {
		http.Error(w, "bad redirect_uri", http.StatusBadRequest)
		return
	}
	if q.Get("client_id") != s.ClientID || q.Get("response_type") != "code" || q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	code := s.random("code-")
	s.codes[code] = grant{user: s.user, challenge: q.Get("code_challenge"), redirect: redirect.String()}
	back := redirect.Query()
	back.Set("code", code)
	back.Set("state", q.Get("state"))
	redirect.RawQuery = back.Encode()
	http.Redirect(w, r, redirect.String(), http.StatusFound)
}

func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		oauthError(w, "invalid_request")
		return
	}
	id, secret, ok := r.BasicAuth()
	if !ok {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	if id != s.ClientID || secret != s.ClientSecret {
		oauthError(w, "invalid_client")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var user string
	switch r.PostForm.Get("grant_type") {
	case "authorization_code":
		g, ok := s.codes[r.PostForm.Get("code")]
		delete(s.codes, r.PostForm.Get("code"))
		sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
		if !ok || base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge || r.PostForm.Get("redirect_uri") != g.redirect {
			oauthError(w, "invalid_grant")
			return
		}
		user = g.user
	case "refresh_token":
		u, ok := s.refresh[r.PostForm.Get("refresh_token")]
		if !ok {
			oauthError(w, "invalid_grant")
			return
		}
		delete(s.refresh, r.PostForm.Get("refresh_token")) // rotated, as many providers do
		user = u
		s.refreshes++
	default:
		oauthError(w, "unsupported_grant_type")
		return
	}
	rt := s.random("rt-")
	s.refresh[rt] = user
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"access_token": s.newAccess(user), "token_type": "Bearer", "expires_in": s.expiresIn, "refresh_token": rt,
	})
}

func (s *Server) introspect(w http.ResponseWriter, r *http.Request) {
	_ = r.ParseForm()
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.access[r.PostForm.Get("token")]
	w.Header().Set("Content-Type", "application/json")
	if !ok || t.dead || time.Now().After(t.expires) {
		s.refused++
		json.NewEncoder(w).Encode(map[string]any{"active": false})
		return
	}
	json.NewEncoder(w).Encode(map[string]any{"active": true, "username": t.user, "exp": t.expires.Unix()})
}

func oauthError(w http.ResponseWriter, code string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	json.NewEncoder(w).Encode(map[string]string{"error": code})
}
