package rules

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net/mail"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/corpus"
	"github.com/postern-mcp/postern/internal/mailparse"
	"github.com/postern-mcp/postern/internal/source"
	"github.com/postern-mcp/postern/internal/store"
)

// oldFile is a rules.toml of the old shape: any/all/none groups, header, list,
// authenticated, from_domain and to_domain conditions, ages, flags and sizes.
const oldFile = `# postern's mail rules
[[rules]]
name = "Lists"
state = "enabled"
proposed_by = "an agent"
stop = true
[rules.match]
list = true
from_domain = "example.org"
[[rules.match.any]]
subject = "digest"
[[rules.match.any]]
[[rules.match.any.header]]
name = "List-Id"
contains = "announce"
[[rules.match.none]]
flags = ["flagged"]
[[rules.match.none]]
authenticated = false
[[rules.actions]]
do = "move"
folder = "Lists"

[[rules]]
name = "Forward receipts"
account = "work"
state = "enabled"
[rules.match]
subject = "Receipt \"#\" (paid)"
to_domain = "corp.test"
older_than = "7d"
body = ["thank you"]
[[rules.match.all]]
has_attachment = true
[[rules.match.all]]
larger = 1000
smaller = 9000000
[[rules.actions]]
do = "forward"
to = "me@ok.test"
`

// TestOldFileRewritten: an old rules.toml is read (none refused), rewritten once in the new
// shape with the old file kept as rules.toml.bak, and a script pushed before the rewrite
// still runs its rules on the server.
func TestOldFileRewritten(t *testing.T) {
	path := filepath.Join(t.TempDir(), File)
	os.WriteFile(path, []byte(oldFile), 0o600)
	rs, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`from:@example.org is:list (subject:*digest* OR header:List-Id:announce) -(is:flagged OR -is:authenticated)`,
		`subject:"*Receipt \"#\" (paid)*" (to:@corp.test OR cc:@corp.test) before:7d body:"thank you" has:attachment larger:1000 smaller:9000000`,
	}
	if len(rs) != 2 || rs[0].Match != want[0] || rs[1].Match != want[1] {
		t.Fatalf("rewritten as\n%q\nwant\n%q", []string{rs[0].Match, rs[1].Match}, want)
	}
	if rs[0].State != Enabled || rs[0].Stop == nil || !*rs[0].Stop || rs[1].Account != "work" || rs[1].Actions[0].To != "me@ok.test" {
		t.Fatalf("the rest of the rules changed: %+v", rs)
	}
	bak, err := os.ReadFile(path + ".bak")
	if err != nil || string(bak) != oldFile {
		t.Fatalf("the backup is %q (%v), want the old file whole", bak, err)
	}
	if fi, _ := os.Stat(path + ".bak"); fi.Mode().Perm() != 0o600 {
		t.Fatalf("the backup is %v", fi.Mode())
	}
	now, _ := os.ReadFile(path)
	if bytes.Contains(now, []byte("[rules.match]")) || !bytes.Contains(now, []byte(`match = "from:@example.org is:list`)) {
		t.Fatalf("the file was not rewritten in the new shape:\n%s", now)
	}
	again, err := Load(path)
	if err != nil || !sameJSON(rs, again) {
		t.Fatalf("read again: %v %+v", err, again)
	}
	if m, _ := filepath.Glob(path + ".bak*"); len(m) != 1 {
		t.Fatalf("backups after a second read: %v", m)
	}
	// Put back by hand, the old file is rewritten again, its earlier backup kept.
	os.WriteFile(path, []byte(oldFile), 0o600)
	if _, err := Load(path); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(path + ".bak.2"); err != nil || string(b) != oldFile {
		t.Fatalf("second backup: %v", err)
	}

	// A push made before the rewrite: the server runs the old rules as they were.
	st, err := store.Open(filepath.Join(t.TempDir(), "store.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	old, _, err := parse(path, []byte(oldFile))
	if err != nil {
		t.Fatal(err)
	}
	_, legacy, _ := parse(path, []byte(oldFile))
	m := fmt.Sprintf(`{%q:%q}`, rs[1].Name, legacyDigest(old[1], legacy[1]))
	st.SetMeta(t.Context(), onServerKey("work"), m)
	pushed := Pushed(path)
	if !OnServer(t.Context(), st, "work", rs[1], pushed) {
		t.Fatal("a rule pushed before the rewrite is not taken as the server's")
	}
	changed := rs[1]
	changed.Match += " is:unread"
	if OnServer(t.Context(), st, "work", changed, pushed) || OnServer(t.Context(), st, "work", rs[1], nil) {
		t.Fatal("a rule changed since the rewrite, or without the backup, is taken as the server's")
	}
}

// corpusMessages is the corpus's size: enough for the rewritten and the old matcher to tell
// thousands of messages apart (what is compared is which ones match, not how fast).
const corpusMessages = 3000

// corpusStore stores the corpus of corpusMessages as a sync would, with Cc recipients, two
// accounts and some forged senders added, and returns each message as the old rules saw it.
func corpusStore(t *testing.T) (*store.Store, []*legacyMessage, time.Time) {
	t.Helper()
	ctx := context.Background()
	gen := corpus.Generate(corpus.Options{Seed: 24, Messages: corpusMessages})
	rng := rand.New(rand.NewPCG(24, 2))
	var senders []string
	for _, m := range gen {
		senders = append(senders, (&mail.Address{Name: m.FromName, Address: m.FromEmail}).String())
	}
	st, err := store.Open(filepath.Join(t.TempDir(), "store.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	type key struct{ account, folder string }
	batches := map[key][]store.NewMessage{}
	var order []key
	newest := time.Time{}
	for i := range gen {
		m := &gen[i]
		raw := m.Raw
		if rng.Float64() < 0.2 {
			raw = append([]byte("Cc: "+senders[rng.IntN(len(senders))]+", Boss <BOSS@Corp.Test>\r\n"), raw...)
		}
		p, err := mailparse.Parse(bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		k := key{"work", m.Folder}
		if rng.Float64() < 0.1 {
			k.account = "home"
		}
		if _, ok := batches[k]; !ok {
			order = append(order, k)
		}
		nm := store.NewMessage{UID: uint32(len(batches[k]) + 1), Flags: store.FlagBits(m.Flags), InternalDate: m.Date, ModSeq: uint64(i + 1)}
		source.Fill(&nm, p)
		nm.Forged = rng.Float64() < 0.15
		batches[k] = append(batches[k], nm)
		if m.Date.After(newest) {
			newest = m.Date
		}
	}
	for _, k := range order {
		aid, err := st.EnsureAccount(ctx, k.account, "imap")
		if err != nil {
			t.Fatal(err)
		}
		f := &store.Folder{AccountID: aid, Name: k.folder, Delim: "/"}
		if err := st.SaveFolder(ctx, f); err != nil {
			t.Fatal(err)
		}
		for b := batches[k]; len(b) > 0; {
			n := min(len(b), 200)
			if err := st.AddMessages(ctx, f, b[:n], b[n-1].UID); err != nil {
				t.Fatal(err)
			}
			b = b[n:]
		}
	}
	rows, more, err := st.Messages(ctx, &store.Filter{Limit: 1 << 20})
	if err != nil || more || len(rows) != len(gen) {
		t.Fatalf("%d rows stored of %d (%v)", len(rows), len(gen), err)
	}
	var msgs []*legacyMessage
	for _, r := range rows {
		b, err := st.Body(ctx, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, &legacyMessage{Row: r, Headers: b.Headers, Text: b.Text})
	}
	return st, msgs, newest.Add(24 * time.Hour).Truncate(time.Second)
}

// randomMatch is an old match built from what a message of msgs holds, with conditions
// that hold for it, near misses, groups and odd text.
func randomMatch(rng *rand.Rand, msgs []*legacyMessage) LegacyMatch {
	pick := func() *legacyMessage { return msgs[rng.IntN(len(msgs))] }
	frag := func(s string) string {
		rs := []rune(s)
		if len(rs) == 0 {
			return "x"
		}
		i := rng.IntN(len(rs))
		j := min(len(rs), i+1+rng.IntN(8))
		out := string(rs[i:j])
		switch rng.IntN(4) {
		case 0:
			out = strings.ToUpper(out)
		case 1:
			out = " " + out + " "
		}
		return out
	}
	cond := func() LegacyCondition {
		m := pick()
		r := m.Row
		var c LegacyCondition
		for range 1 + rng.IntN(2) {
			switch rng.IntN(17) {
			case 0:
				c.From = frag(r.From.Email + " " + r.From.Name)
			case 1:
				if len(r.To) > 0 {
					c.To = frag(r.To[0].Email)
				}
			case 2:
				if len(r.Cc) > 0 {
					c.Cc = frag(r.Cc[0].Name + r.Cc[0].Email)
				} else {
					c.Cc = "boss"
				}
			case 3:
				c.Subject = frag(r.Subject)
			case 4:
				_, d, _ := strings.Cut(r.From.Email, "@")
				if i := strings.Index(d, "."); i >= 0 && rng.IntN(2) == 0 {
					d = d[i+1:]
				}
				c.FromDomain = []string{d, strings.ToUpper(d), "." + d, "@" + d, "ample.com"}[rng.IntN(5)]
			case 5:
				c.ToDomain = []string{"corp.test", "example.com", "Test", "example.org"}[rng.IntN(4)]
			case 6:
				c.List = ptr(rng.IntN(2) == 0)
			case 7:
				c.HasAttachment = ptr(rng.IntN(2) == 0)
			case 8:
				c.Larger = ptr(int(r.Size) - 1 + rng.IntN(3))
			case 9:
				c.Smaller = ptr(int(r.Size) - 1 + rng.IntN(3))
			case 10:
				c.OlderThan = []string{"30d", "3w", "6m", "1y", "2025-06-01", "soon"}[rng.IntN(6)]
			case 11:
				c.YoungerThan = []string{"30d", "2w", "9m", "1y", "2025-03"}[rng.IntN(5)]
			case 12:
				all := []string{"read", "unread", "flagged", "unflagged", "answered", "unanswered"}
				c.Flags = []string{all[rng.IntN(6)]}
				if rng.IntN(3) == 0 {
					c.Flags = append(c.Flags, all[rng.IntN(6)])
				}
			case 13:
				if len(m.Headers) > 0 {
					h := m.Headers[rng.IntN(len(m.Headers))]
					c.Header = []LegacyHeader{{Name: strings.ToLower(h.Name), Contains: frag(h.Value)}}
				}
			case 14:
				c.Header = []LegacyHeader{{Name: "List-Id", Contains: []string{"", " ", "lists", "ANNOUNCE"}[rng.IntN(4)]}}
			case 15:
				c.Body = []string{frag(m.Text)}
			case 16:
				c.Authenticated = ptr(rng.IntN(2) == 0)
			}
		}
		return c
	}
	var lm LegacyMatch
	if rng.IntN(4) > 0 {
		lm.LegacyCondition = cond()
	}
	group := func() []LegacyCondition {
		var out []LegacyCondition
		for range 1 + rng.IntN(3) {
			out = append(out, cond())
		}
		return out
	}
	switch rng.IntN(6) {
	case 0:
		lm.Any = group()
	case 1:
		lm.All = group()
	case 2:
		lm.None = group()
	case 3:
		lm.Any, lm.None = group(), group()
	}
	return lm
}

// TestConvertOnCorpus: on the corpus (corpusStore), every old match rewritten as a query
// (Convert) matches exactly the messages the old matcher matched: hand-written ones using
// every condition and odd text, and 250 drawn at random from the corpus's own fields.
func TestConvertOnCorpus(t *testing.T) {
	if testing.Short() {
		t.Skip("stores a corpus of thousands of messages")
	}
	st, msgs, now := corpusStore(t)
	ctx := t.Context()
	var list []LegacyMatch
	for _, c := range []LegacyCondition{
		{From: `"quoted" (and) \back`}, {Subject: "RE:"}, {Subject: "*"}, {Subject: "  "}, {To: " "}, {Cc: " "},
		{FromDomain: "."}, {FromDomain: " "}, {ToDomain: ".."}, {Flags: []string{"read", "unread"}}, {Flags: []string{"seen"}},
		{Larger: ptr(0)}, {Larger: ptr(-3)}, {Smaller: ptr(0)}, {Smaller: ptr(-1)}, {Larger: ptr(1 << 41)}, {Smaller: ptr(1 << 41)},
		{OlderThan: "7d is:unread"}, {OlderThan: "1y before:2w -before:30d"}, {YoungerThan: "1y before:2w"}, {YoungerThan: "2w (before:1d)"}, {OlderThan: "-5d"}, {YoungerThan: " 2W "}, {Header: []LegacyHeader{{Name: "Bad Name", Contains: "x"}}},
		{Header: []LegacyHeader{{Name: " precedence ", Contains: "BULK"}}}, {Header: []LegacyHeader{{Name: "List-Unsubscribe-Post", Contains: ""}}},
		{Body: []string{"  "}}, {Body: []string{`"`, "("}}, {Authenticated: ptr(true), List: ptr(false)},
		{From: "É"}, {Subject: "ü"},
	} {
		list = append(list, LegacyMatch{LegacyCondition: c})
	}
	list = append(list,
		LegacyMatch{Any: []LegacyCondition{{}, {From: "x"}}},
		LegacyMatch{None: []LegacyCondition{{}, {From: "x"}}},
		LegacyMatch{All: []LegacyCondition{{}}},
		LegacyMatch{},
	)
	rng := rand.New(rand.NewPCG(24, 3))
	for range 250 {
		list = append(list, randomMatch(rng, msgs))
	}
	someMatched, someNot := 0, 0
	for i, lm := range list {
		account := ""
		if i%7 == 3 {
			account = "home"
		}
		r := generated.Rule{Name: "r", Account: account, Match: Convert(lm), State: Enabled}
		var want []int64
		for _, m := range msgs {
			if legacyMatches(account, lm, m, now) {
				want = append(want, m.Row.ID)
			}
		}
		set, err := Matching(ctx, st, r, store.Filter{}, nil, now)
		if err != nil {
			t.Fatalf("match %d %+v as %q: %v", i, lm, r.Match, err)
		}
		var got []int64
		for id := range set {
			got = append(got, id)
		}
		sort.Slice(got, func(a, b int) bool { return got[a] > got[b] })
		if !slices.Equal(got, want) {
			t.Errorf("match %d %+v\nrewritten %q\nmatches %d messages, the old matcher %d (first differing: %v)", i, lm, r.Match, len(got), len(want), firstDiff(got, want))
		}
		if len(want) > 0 && len(want) < len(msgs) {
			someMatched++
		} else {
			someNot++
		}
		// The same on a few candidates, as the sync asks.
		if i%40 == 0 {
			ids := []int64{msgs[0].Row.ID, msgs[len(msgs)/2].Row.ID, msgs[len(msgs)-1].Row.ID}
			sub, err := Matching(ctx, st, r, store.Filter{}, ids, now)
			if err != nil {
				t.Fatal(err)
			}
			for _, id := range ids {
				if sub[id] != set[id] {
					t.Errorf("match %d: message %d among candidates %v, among all %v", i, id, sub[id], set[id])
				}
			}
		}
	}
	t.Logf("%d old matches over %d messages: %d match some but not all, %d none or all", len(list), len(msgs), someMatched, someNot)
	if someMatched < len(list)/3 {
		t.Fatalf("only %d matches tell messages apart; the test proves little", someMatched)
	}
}

func firstDiff(a, b []int64) string {
	in := func(s []int64, x int64) bool { return slices.Contains(s, x) }
	for _, x := range a {
		if !in(b, x) {
			return fmt.Sprintf("%d only in the new", x)
		}
	}
	for _, x := range b {
		if !in(a, x) {
			return fmt.Sprintf("%d only in the old", x)
		}
	}
	return "none"
}
