// Package approval owns prepare/commit pairs: the tokens a prepare issues and
// a commit redeems once (this file), the flow between them (pairs.go) and the
// actions held for postern approve (hold.go). It never runs an action without
// a redeemed token and, when the effect needs it, the person's yes.
//
// Every refusal of a token is the same sentence, whatever the reason, so
// that it tells a prober nothing; a token presented with a binding that does
// not match is spent all the same. Tokens live in memory only.
package approval

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Lifetimes a configuration may choose, and the default.
const (
	MinTTL     = 30 * time.Second
	MaxTTL     = 15 * time.Minute
	DefaultTTL = 5 * time.Minute
)

// MaxPending bounds the tokens kept at once; issuing one more drops the
// oldest, which then refuses like any other.
const MaxPending = 1000

// tokenBytes is the token's randomness: 256 bits, 43 characters of base64url.
const tokenBytes = 32

// ErrRefused is the one refusal of Redeem.
var ErrRefused = errors.New("this approval token is not valid for this action: it may have expired, been used already, come from another connection, or the action changed since it was prepared; prepare the action again")

// Binding is what a token is valid for.
type Binding struct {
	Connection string   // the MCP connection that prepared it
	Account    string   // the account the action uses
	Tool       string   // the prepare tool, e.g. mail_send
	Effect     string   // the catalog effect, e.g. send
	Payload    [32]byte // PayloadHash of the normalized payload
}

func (b Binding) equal(o Binding) bool {
	return subtle.ConstantTimeCompare([]byte(b.Connection), []byte(o.Connection))&
		subtle.ConstantTimeCompare([]byte(b.Account), []byte(o.Account))&
		subtle.ConstantTimeCompare([]byte(b.Tool), []byte(o.Tool))&
		subtle.ConstantTimeCompare([]byte(b.Effect), []byte(o.Effect))&
		subtle.ConstantTimeCompare(b.Payload[:], o.Payload[:]) == 1
}

// PayloadHash is the SHA-256 of v's normalized form: its JSON encoding as
// encoding/json writes it (struct fields in order, map keys sorted, no
// insignificant space), so that the same action always hashes the same and
// any change to it, one byte of a body included, does not.
func PayloadHash(v any) ([32]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return [32]byte{}, fmt.Errorf("the action cannot be normalized for its approval: %w", err)
	}
	return sha256.Sum256(b), nil
}

// Store holds the pending tokens.
type Store struct {
	ttl time.Duration
	now func() time.Time

	mu      sync.Mutex
	pending map[string]*entry
	order   []string // issue order, for dropping the oldest
}

type entry struct {
	binding Binding
	expires time.Time
}

// New makes a store whose tokens live ttl (0: DefaultTTL); now is the clock
// (nil: time.Now). A ttl outside MinTTL..MaxTTL is refused.
func New(ttl time.Duration, now func() time.Time) (*Store, error) {
	if ttl == 0 {
		ttl = DefaultTTL
	}
	if ttl < MinTTL || ttl > MaxTTL {
		return nil, fmt.Errorf("an approval may last from %v to %v, not %v; change approval_ttl in the configuration", MinTTL, MaxTTL, ttl)
	}
	if now == nil {
		now = time.Now
	}
	return &Store{ttl: ttl, now: now, pending: map[string]*entry{}}, nil
}

// TTL is how long a token lives.
func (s *Store) TTL() time.Duration { return s.ttl }

// Issue makes a token for b and returns it with its expiry.
func (s *Store) Issue(b Binding) (token string, expires time.Time, err error) {
	raw := make([]byte, tokenBytes)
	if _, err := rand.Read(raw); err != nil {
		return "", time.Time{}, fmt.Errorf("no randomness for an approval token (%v); try again", err)
	}
	token = base64.RawURLEncoding.EncodeToString(raw)
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	s.sweep(now)
	for len(s.order) >= MaxPending {
		delete(s.pending, s.order[0])
		s.order = s.order[1:]
	}
	expires = now.Add(s.ttl)
	s.pending[token] = &entry{binding: b, expires: expires}
	s.order = append(s.order, token)
	return token, expires, nil
}

// Redeem spends token for b: nil once, for the binding it was issued for and
// before it expires; ErrRefused otherwise. A token is gone after any Redeem.
func (s *Store) Redeem(token string, b Binding) error { return s.take(token, b, true) }

// Check reports whether token would be redeemed for b now, without spending
// it: a 2026-07-28 commit asks the person in a round of its own first and
// redeems the token only when the answer comes back. A token that does not
// match is spent all the same, as by Redeem.
func (s *Store) Check(token string, b Binding) error { return s.take(token, b, false) }

// take looks token up for b, spending it when spend is set or when it does not match.
func (s *Store) take(token string, b Binding, spend bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	s.sweep(now)
	e, ok := s.pending[token]
	if !ok {
		return ErrRefused
	}
	valid := now.Before(e.expires) && e.binding.equal(b)
	if spend || !valid {
		s.forget(token)
	}
	if !valid {
		return ErrRefused
	}
	return nil
}

// Pending is how many tokens are waiting.
func (s *Store) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweep(s.now())
	return len(s.pending)
}

// sweep drops the expired tokens; s.mu is held.
func (s *Store) sweep(now time.Time) {
	keep := s.order[:0]
	for _, t := range s.order {
		if e, ok := s.pending[t]; ok && now.Before(e.expires) {
			keep = append(keep, t)
		} else {
			delete(s.pending, t)
		}
	}
	clear(s.order[len(keep):])
	s.order = keep
}

// forget drops one token; s.mu is held.
func (s *Store) forget(token string) {
	delete(s.pending, token)
	for i, t := range s.order {
		if t == token {
			s.order = append(s.order[:i], s.order[i+1:]...)
			break
		}
	}
}
