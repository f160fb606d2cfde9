package approval

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"
)

// A Queue is the folder where a server holds the commits it may not run
// before the person approves them with postern approve in a terminal: one
// file per held commit (CODE.json, 0600, in a 0700 folder), and the person's
// decision beside it (CODE.yes or CODE.no, holding the held commit's nonce, so
// that a decision never reaches another commit that later gets the same code).
// The server removes both files when it stops waiting.
type Queue struct {
	Dir string
	// Poll is how often a holding server looks for the decision (0: 200 ms).
	Poll time.Duration
	now  func() time.Time
}

// Held is one commit waiting for the person.
type Held struct {
	Code    string    `json:"code"`    // what the person types: 6 letters and digits
	Ref     string    `json:"ref"`     // the approval's reference in the audit log
	Tool    string    `json:"tool"`    // the commit tool
	Account string    `json:"account"` // the account it acts for
	Text    string    `json:"text"`    // the preview, as lines
	Client  string    `json:"client"`  // the MCP client that asked
	PID     int       `json:"pid"`     // the holding server's process
	Created time.Time `json:"created"`
	Expires time.Time `json:"expires"` // when the server stops waiting
	Nonce   string    `json:"nonce"`
}

// ErrNoSuchCode is returned by Decide for a code that is not waiting.
var ErrNoSuchCode = errors.New("no action is waiting under that code")

// codeAlphabet leaves out letters and digits that are read alike (0/O, 1/I/L).
const codeAlphabet = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"

func newCode() (string, error) {
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	for i := range b {
		b[i] = codeAlphabet[int(b[i])%len(codeAlphabet)]
	}
	return string(b), nil
}

func (q *Queue) clock() time.Time {
	if q.now != nil {
		return q.now()
	}
	return time.Now()
}

func (q *Queue) path(code, ext string) string { return filepath.Join(q.Dir, code+ext) }

// Put records h (its Code, Nonce, PID and Created are set here) and returns it.
func (q *Queue) Put(h Held) (Held, error) {
	if err := os.MkdirAll(q.Dir, 0o700); err != nil {
		return h, fmt.Errorf("cannot create the approvals folder %s: %w", q.Dir, err)
	}
	if err := os.Chmod(q.Dir, 0o700); err != nil {
		return h, fmt.Errorf("cannot restrict the approvals folder %s: %w", q.Dir, err)
	}
	nonce := make([]byte, 16)
	if _, err := rand.Read(nonce); err != nil {
		return h, fmt.Errorf("no randomness to hold an action: %w", err)
	}
	h.Nonce = base64.RawURLEncoding.EncodeToString(nonce)
	h.PID = os.Getpid()
	h.Created = q.clock().UTC()
	for try := 0; try < 20; try++ {
		code, err := newCode()
		if err != nil {
			return h, fmt.Errorf("no randomness to hold an action: %w", err)
		}
		h.Code = code
		b, _ := json.MarshalIndent(h, "", "  ")
		f, err := os.OpenFile(q.path(code, ".json"), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return h, fmt.Errorf("cannot hold the action in %s: %w", q.Dir, err)
		}
		// A stale decision under this code belongs to nobody now.
		os.Remove(q.path(code, ".yes"))
		os.Remove(q.path(code, ".no"))
		_, werr := f.Write(b)
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			os.Remove(q.path(code, ".json"))
			return h, fmt.Errorf("cannot hold the action in %s: %w", q.Dir, werr)
		}
		return h, nil
	}
	return h, fmt.Errorf("cannot find a free code in %s; remove old files there", q.Dir)
}

// Wait waits for the person's decision on h until h.Expires or until done is
// closed, then removes h's files. It reports whether the person approved; a
// wait that ends without a decision is not an approval.
func (q *Queue) Wait(h Held, done <-chan struct{}) (approved bool, decided bool) {
	defer q.Remove(h.Code)
	poll := q.Poll
	if poll == 0 {
		poll = 200 * time.Millisecond
	}
	t := time.NewTicker(poll)
	defer t.Stop()
	for {
		for _, d := range []struct {
			ext string
			yes bool
		}{{".no", false}, {".yes", true}} { // a decline wins over an approval
			b, err := os.ReadFile(q.path(h.Code, d.ext))
			if err == nil && subtle.ConstantTimeCompare([]byte(strings.TrimSpace(string(b))), []byte(h.Nonce)) == 1 {
				return d.yes, true
			}
		}
		if !q.clock().Before(h.Expires) {
			return false, false
		}
		select {
		case <-done:
			return false, false
		case <-t.C:
		}
	}
}

// Remove drops a held commit and its decision.
func (q *Queue) Remove(code string) {
	for _, ext := range []string{".yes", ".no", ".json"} {
		os.Remove(q.path(code, ext))
	}
}

// List returns the commits waiting now, oldest first. Files of servers that
// are gone, or past their wait, are removed.
func (q *Queue) List() ([]Held, error) {
	ents, err := os.ReadDir(q.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read the approvals folder %s: %w", q.Dir, err)
	}
	var out []Held
	for _, e := range ents {
		code, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok {
			continue
		}
		h, err := q.read(code)
		if err != nil {
			continue // being written, or not ours
		}
		if !q.live(h) {
			q.Remove(code)
			continue
		}
		out = append(out, h)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Created.Before(out[j].Created) })
	return out, nil
}

// Get returns the held commit under code, if it is waiting.
func (q *Queue) Get(code string) (Held, error) {
	code = strings.ToUpper(strings.TrimSpace(code))
	if len(code) != 6 || strings.Trim(code, codeAlphabet) != "" {
		return Held{}, ErrNoSuchCode
	}
	h, err := q.read(code)
	if err != nil || !q.live(h) {
		return Held{}, ErrNoSuchCode
	}
	return h, nil
}

// Decide records the person's decision on the commit held under code.
func (q *Queue) Decide(code string, yes bool) error {
	h, err := q.Get(code)
	if err != nil {
		return err
	}
	ext := ".no"
	if yes {
		ext = ".yes"
	}
	f, err := os.OpenFile(q.path(h.Code, ext), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("a decision on %s was already given", h.Code)
	}
	if err != nil {
		return fmt.Errorf("cannot record the decision in %s: %w", q.Dir, err)
	}
	_, werr := f.WriteString(h.Nonce + "\n")
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	return werr
}

func (q *Queue) read(code string) (Held, error) {
	var h Held
	b, err := os.ReadFile(q.path(code, ".json"))
	if err != nil {
		return h, err
	}
	if err := json.Unmarshal(b, &h); err != nil {
		return h, err
	}
	if h.Code != code {
		return h, errors.New("code mismatch")
	}
	return h, nil
}

// live reports whether h's server still waits for it.
func (q *Queue) live(h Held) bool {
	if !q.clock().Before(h.Expires) {
		return false
	}
	if h.PID <= 0 {
		return false
	}
	err := syscall.Kill(h.PID, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
