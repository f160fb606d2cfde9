package store_test

// This file checks store search (Filter + search.Query) against a brute-force
// matcher over an in-memory model of every stored message. The model is made
// from the messages as they were given to AddMessages (after parsing, so the
// test judges the search and not the parser or the sync), with a tokenizer of
// its own that testModelTokens checks against SQLite's: it calls and copies
// nothing of the store's indexing. Only the ids come from the store.
//
// POSTERN_SEARCH_DUMP=1 go test -run TestSearch/AgainstModel prints every
// generated query with its match counts (bodies off/on).

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"

	"github.com/postern-mcp/postern/internal/search"
	"github.com/postern-mcp/postern/internal/store"
)

// ---- the tests ----

// TestSearch stores the corpus once and runs every check against it.
func TestSearch(t *testing.T) {
	t.Parallel()
	start := time.Now()
	e, err := newSearchEnv(filepath.Join(t.TempDir(), store.File), searchMessages)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.st.Close() }) // after the parallel subtests
	t.Logf("stored %d messages in %s", len(e.msgs), time.Since(start).Round(time.Millisecond))
	// The subtests only read the store and the model: they run side by side.
	for _, st := range []struct {
		name string
		fn   func(*testing.T, *searchEnv)
	}{
		{"ModelTokens", testModelTokens},
		{"NewestFirst", testNewestFirst},
		{"AgainstModel", testAgainstModel},
		{"BodyWordsNeedBodies", testBodyWordsNeedBodies},
		{"Paging", testPaging},
		{"AccountsHidden", testAccountsHidden},
		{"SizeBounds", testSizeBounds},
	} {
		t.Run(st.name, func(t *testing.T) {
			t.Parallel()
			st.fn(t, e)
		})
	}
}

// testModelTokens checks the model's tokenizer against SQLite's
// unicode61 remove_diacritics 2, in a separate database, so that a difference
// is reported as the model's: every distinct word the model holds, capitalised,
// and every field of every message, whole, so that the splitting is checked too.
func testModelTokens(t *testing.T, e *searchEnv) {
	ctx := context.Background()
	s, err := store.Open(filepath.Join(t.TempDir(), "tok.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	db := s.DB()
	for _, q := range []string{
		`CREATE VIRTUAL TABLE tk USING fts5(x, tokenize='unicode61 remove_diacritics 2')`,
		`CREATE VIRTUAL TABLE tkv USING fts5vocab(tk, 'instance')`,
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	seen := map[string]bool{}
	var words []string
	for _, m := range e.msgs {
		for f := range nFields {
			for _, w := range m.words[f] {
				if !seen[w] {
					seen[w] = true
					words = append(words, w)
				}
			}
		}
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range words {
		// a word as the corpus writes it: capitalised, to check case folding too
		rs := []rune(w)
		rs[0] = unicode.ToUpper(rs[0])
		if _, err := tx.ExecContext(ctx, `INSERT INTO tk(rowid, x) VALUES(?, ?)`, i+1, string(rs)); err != nil {
			t.Fatal(err)
		}
	}
	fieldDoc := func(mi, f int) int { return len(words) + 1 + mi*nFields + f }
	for mi, m := range e.msgs {
		for f := range nFields {
			if _, err := tx.ExecContext(ctx, `INSERT INTO tk(rowid, x) VALUES(?, ?)`, fieldDoc(mi, f), m.raw[f]); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	rows, err := db.QueryContext(ctx, `SELECT doc, term FROM tkv ORDER BY doc, offset`)
	if err != nil {
		t.Fatal(err)
	}
	got := map[int][]string{}
	for rows.Next() {
		var doc int
		var term string
		if err := rows.Scan(&doc, &term); err != nil {
			t.Fatal(err)
		}
		got[doc] = append(got[doc], term)
	}
	rows.Close()
	bad := 0
	for i, w := range words {
		want := []string{normWord(w)}
		if !slices.Equal(got[i+1], want) {
			if bad++; bad <= 20 {
				t.Errorf("model tokenizer: SQLite makes %q of the word %q, the model %q", got[i+1], w, want)
			}
		}
	}
	t.Logf("%d distinct words: model tokenizer agrees with SQLite on %d", len(words), len(words)-bad)
	badFields := 0
	for mi, m := range e.msgs {
		for f := range nFields {
			if got := got[fieldDoc(mi, f)]; !slices.Equal(got, m.toks[f]) && (len(got) > 0 || len(m.toks[f]) > 0) {
				if badFields++; badFields <= 20 {
					t.Errorf("model tokenizer: SQLite makes %q of field %d of message %d (%q), the model %q", got, f, m.id, m.raw[f], m.toks[f])
				}
			}
		}
	}
	if len(words) == 0 || len(e.msgs) == 0 {
		t.Fatal("the model holds no words to check")
	}
}

func testAgainstModel(t *testing.T, e *searchEnv) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(searchSeed, 2))

	var queries []*mQuery
	// Fixed queries first, so every operator and form is there whatever the draws.
	fixed := func(parts ...func(b *qb)) {
		b := &qb{e: e, r: r}
		for _, p := range parts {
			p(b)
		}
		queries = append(queries, b.build())
	}
	word := func(f int, field string, quoted, neg bool) func(b *qb) {
		return func(b *qb) { b.addTerm(field, b.pickWords(f, 1), quoted, neg, " ") }
	}
	phrase := func(f, n int, field string, neg bool) func(b *qb) {
		return func(b *qb) { b.addTerm(field, b.pickWords(f, n), true, neg, " ") }
	}
	op := func(text, name string, pred func(*modelMsg) bool) func(b *qb) {
		return func(b *qb) { b.addOp(text, name, pred) }
	}
	in := func(text, name string) func(b *qb) {
		return func(b *qb) { b.parts = append(b.parts, qpart{text: text, op: "in:", folder: name}) }
	}
	account := func(name string) func(b *qb) {
		return func(b *qb) { b.parts = append(b.parts, qpart{text: "account:" + name, op: "account:", acct: name}) }
	}
	seen := func(bit int, want bool) func(*modelMsg) bool {
		return func(m *modelMsg) bool { return (m.flags&bit != 0) == want }
	}
	fixed(word(fSubject, "", false, false))
	fixed(word(fFrom, "from", false, false))
	fixed(phrase(fFrom, 2, "from", false))
	fixed(word(fTo, "to", false, false), word(fSubject, "", false, false))
	fixed(word(fCc, "cc", false, false))
	fixed(word(fCc, "cc", false, true), word(fSubject, "", false, false))
	fixed(phrase(fSubject, 2, "subject", false))
	fixed(word(fSubject, "subject", false, true), op("is:unread", "is:1", seen(store.FlagSeen, false)))
	fixed(word(fAtt, "", false, false))
	fixed(phrase(fBody, 3, "", false))
	fixed(word(fBody, "", true, false), word(fSubject, "", false, true))
	fixed(in("in:INBOX", "INBOX"), op("is:read", "is:1", seen(store.FlagSeen, true)))
	fixed(in("in:inbox", "INBOX"), in("in:Archive", "Archive"), word(fSubject, "", false, false))
	fixed(in("in:Work/Projects", "Work/Projects"), op("-is:unread", "is:1", seen(store.FlagSeen, true)))
	fixed(account("other"), word(fSubject, "", false, false))
	fixed(op("is:flagged", "is:2", seen(store.FlagFlagged, true)))
	// Folder names in any case and with either separator; account names are
	// exact here (internal/tools finds them in any case before the store).
	fixed(in("in:archive", "archive"), word(fSubject, "", false, false))
	fixed(in("in:work.projects", "work.projects"), op("is:read", "is:1", seen(store.FlagSeen, true)))
	fixed(in("in:NEWSLETTERS", "Newsletters"))
	fixed(account("ACCT"))
	fixed(account("acct"), account("other"), in("in:Sent", "Sent"))
	fixed(op("is:answered", "is:4", seen(store.FlagAnswered, true)), op("-is:flagged", "is:2", seen(store.FlagFlagged, false)))
	fixed(op("has:attachment", "has:", func(m *modelMsg) bool { return m.hasAtt }), word(fAtt, "", false, false))
	fixed(op("after:2025-06-01", "after:", func(m *modelMsg) bool { return !m.date.Before(time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)) }),
		op("before:2025-07-01", "before:", func(m *modelMsg) bool { return m.date.Before(time.Date(2025, 7, 1, 0, 0, 0, 0, time.UTC)) }))
	fixed(op("after:30d", "after:", func(m *modelMsg) bool { return !m.date.Before(e.now.AddDate(0, 0, -30)) }))
	fixed(op("after:1y", "after:", func(m *modelMsg) bool { return !m.date.Before(e.now.AddDate(-1, 0, 0)) }),
		op("before:6m", "before:", func(m *modelMsg) bool { return m.date.Before(e.now.AddDate(0, -6, 0)) }),
		op("-is:read", "is:1", seen(store.FlagSeen, false)))
	fixed(op("larger:100k", "larger:", func(m *modelMsg) bool { return m.size > 100<<10 }))
	fixed(op("smaller:4k", "smaller:", func(m *modelMsg) bool { return m.size < 4<<10 }), word(fSubject, "", false, false))
	fixed(op("larger:0.2M", "larger:", func(m *modelMsg) bool { return m.size > 209715 }),
		op("smaller:1M", "smaller:", func(m *modelMsg) bool { return m.size < 1<<20 }))
	// A bare word, then operators: still the prefix.
	fixed(word(fSubject, "", false, false), in("in:INBOX", "INBOX"))
	// Non-ASCII names and subjects, with and without their diacritics.
	for _, w := range []string{"Zoë", "zoe", "Müller", "José", "garcia", "François", "Søren", "Jørgensen", "Łukasz", "wiśniewski",
		"Ольга", "ольга", "Дмитрий", "山田太郎", "Œuvrard", "Šimić", "simic", "Þórsson", "Groß", "Größe", "Café", "café", "résumé", "Отчёт", "日本語の資料", "Привет"} {
		w := w
		fixed(func(b *qb) {
			b.parts = append(b.parts, qpart{text: w, term: &mTerm{words: tokens(w)}, bare: true})
		})
		fixed(func(b *qb) {
			b.parts = append(b.parts, qpart{text: `"` + w + `"`, term: &mTerm{words: tokens(w)}})
		})
	}
	for _, w := range []string{"Zo", "Mü", "mu", "Ол", "山田", "Jør", "Łu", "Þó", "caf", "Résu"} {
		w := w
		fixed(func(b *qb) {
			b.parts = append(b.parts, qpart{text: w, term: &mTerm{words: tokens(w)}, bare: true})
		})
	}
	// Unique body words (the corpus guarantees them to be in one body only).
	for range 3 {
		m := e.msgs[r.IntN(len(e.msgs))]
		w := m.corpus.BodyWords[len(m.corpus.BodyWords)-1]
		fixed(func(b *qb) { b.addTerm("", []string{w}, false, false, " ") })
	}
	nFixed := len(queries)
	for range 80 {
		b := &qb{e: e, r: r}
		nText, nOps := r.IntN(4), r.IntN(4)
		if nText+nOps == 0 {
			nText = 1
		}
		for range nText {
			b.randomText()
		}
		for range nOps {
			b.randomOp()
		}
		queries = append(queries, b.build())
	}
	// OR and groups: random ones, and a prefix inside a group.
	nPlain := len(queries)
	for range 60 {
		queries = append(queries, e.groupQuery(r))
	}
	for range 4 {
		w1, w2 := (&qb{e: e, r: r}).pickWords(fSubject, 1), (&qb{e: e, r: r}).pickWords(fSubject, 1)
		cut := tokens(w2[0])[0]
		if rs := []rune(cut); len(rs) > 3 {
			cut = string(rs[:3])
		}
		queries = append(queries, &mQuery{
			text: "(" + w1[0] + " OR " + cut + ")",
			groups: []mGroup{{alts: []*mQuery{
				{terms: []mTerm{{words: tokens(w1[0])}}},
				{terms: []mTerm{{words: []string{cut}, prefix: true}}},
			}}},
		})
	}
	nGroups := len(queries) - nPlain

	// Each query runs with bodies off and on, restricted to one account, and
	// once more with the list filters of mail_list (folder, flagged) around it.
	type mode struct {
		bodies   bool
		accounts []string
		folder   string
		flagged  *bool
	}
	no := false
	modes := []mode{{false, nil, "", nil}, {true, nil, "", nil}, {true, []string{"acct"}, "", nil}, {false, []string{"acct", "other"}, "inbox", &no}}
	opsSeen := map[string]bool{}
	for qi, q := range queries {
		for _, o := range q.ops {
			opsSeen[strings.TrimRight(o, "0123456789")] = true
		}
		for _, w := range strings.Fields(q.text) {
			if i := strings.Index(w, ":"); i > 0 {
				opsSeen[strings.ToLower(strings.TrimLeft(w[:i+1], "-"))] = true
			}
		}
		if os.Getenv("POSTERN_SEARCH_DUMP") != "" {
			fmt.Printf("%3d %-90q %d/%d\n", qi, q.text, len(e.expect(q, false, nil)), len(e.expect(q, true, nil)))
		}
	}
	// The queries are compared in two halves side by side: each only reads the store.
	var mu sync.Mutex
	compared, matched, nonEmpty := 0, 0, 0
	t.Run("Queries", func(t *testing.T) {
		for half := range 2 {
			t.Run(strconv.Itoa(half), func(t *testing.T) {
				t.Parallel()
				for qi, q := range queries {
					if qi%2 != half {
						continue
					}
					parsed, err := search.Parse(q.text, e.now)
					if err != nil {
						t.Fatalf("query %d %q does not parse: %v", qi, q.text, err)
					}
					for _, md := range modes {
						mq := q
						if md.folder != "" || md.flagged != nil {
							c := *q
							c.preds = slices.Clip(c.preds)
							if md.folder != "" {
								c.preds = append(c.preds, func(m *modelMsg) bool { return inFolder(m, md.folder) })
							}
							if md.flagged != nil {
								want := *md.flagged
								c.preds = append(c.preds, func(m *modelMsg) bool { return (m.flags&store.FlagFlagged != 0) == want })
							}
							mq = &c
						}
						want := e.expect(mq, md.bodies, md.accounts)
						f := &store.Filter{Query: parsed, Bodies: md.bodies, Accounts: md.accounts, Folder: md.folder, Flagged: md.flagged, Limit: 1 << 20}
						rows, more, err := e.st.Messages(ctx, f)
						if err != nil {
							t.Fatalf("query %d %q: %v", qi, q.text, err)
						}
						got := make([]int64, len(rows))
						for i, r := range rows {
							got[i] = r.ID
						}
						n, err := e.st.Count(ctx, f)
						if err != nil {
							t.Fatalf("query %d %q: Count: %v", qi, q.text, err)
						}
						mu.Lock()
						compared++
						matched += len(want)
						if len(want) > 0 {
							nonEmpty++
						}
						mu.Unlock()
						if more {
							t.Errorf("query %d %q: more=true with a limit above the corpus", qi, q.text)
						}
						if !slices.Equal(got, want) || n != len(want) {
							t.Errorf("query %d %q (bodies=%v accounts=%v folder=%q flagged=%v; parsed %+v):\n%s\nCount=%d",
								qi, q.text, md.bodies, md.accounts, md.folder, md.flagged, parsed.Terms, e.diff(mq, md.bodies, got, want), n)
						}
						// Small pages: the newest matches come first whatever the page
						// size, also when few of a word's newest messages pass the other
						// conditions (the search then widens its window several times).
						for _, lim := range []int{1, 3, 20} {
							g := *f
							g.Limit = lim
							rows, more, err := e.st.Messages(ctx, &g)
							if err != nil {
								t.Fatalf("query %d %q limit %d: %v", qi, q.text, lim, err)
							}
							page := make([]int64, len(rows))
							for i, r := range rows {
								page[i] = r.ID
							}
							wantPage := want[:min(lim, len(want))]
							if !slices.Equal(page, wantPage) || more != (len(want) > lim) {
								t.Errorf("query %d %q (bodies=%v accounts=%v folder=%q) limit %d: got %v more=%v, want %v more=%v",
									qi, q.text, md.bodies, md.accounts, md.folder, lim, page, more, wantPage, len(want) > lim)
							}
						}
					}
				}
			})
		}
	})
	for _, o := range search.Operators {
		if !opsSeen[o] {
			t.Errorf("no query used %s", o)
		}
	}
	if nonEmpty < compared/2 {
		t.Errorf("only %d of %d comparisons had any match; the generator draws too narrowly", nonEmpty, compared)
	}
	t.Logf("%d of the queries with OR or groups", nGroups)
	t.Logf("%d queries (%d fixed, %d random), %d comparisons with store.Messages and store.Count (%d with matches), %d matching ids compared",
		len(queries), nFixed, len(queries)-nFixed, compared, nonEmpty, matched)
}

// diff explains a mismatch: the first few ids on either side only, with the
// fields that decided them in the model.
func (e *searchEnv) diff(q *mQuery, bodies bool, got, want []int64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "store %d ids, model %d ids", len(got), len(want))
	inGot := map[int64]bool{}
	for _, id := range got {
		inGot[id] = true
	}
	inWant := map[int64]bool{}
	for _, id := range want {
		inWant[id] = true
	}
	show := func(label string, ids []int64, other map[int64]bool) {
		n := 0
		for _, id := range ids {
			if other[id] {
				continue
			}
			if n++; n > 5 {
				continue
			}
			m := e.byID[id]
			if m == nil {
				fmt.Fprintf(&b, "\n  %s: id %d (not in the model)", label, id)
				continue
			}
			fmt.Fprintf(&b, "\n  %s: id %d %s/%s flags=%d size=%d date=%s att=%v subject=%q from=%q to=%q cc=%q atts=%q",
				label, id, m.account, m.folder, m.flags, m.size, m.date.Format(time.RFC3339), m.hasAtt,
				m.raw[fSubject], m.raw[fFrom], m.raw[fTo], m.raw[fCc], m.raw[fAtt])
			for ti, t := range q.terms {
				fmt.Fprintf(&b, "\n      term %d %+v hits=%v", ti, t, termHits(t, m, bodies))
			}
		}
		if n > 5 {
			fmt.Fprintf(&b, "\n  %s: ... %d in all", label, n)
		}
	}
	show("only in store", got, inWant)
	show("only in model", want, inGot)
	if len(got) == len(want) && !slices.Equal(got, want) {
		b.WriteString("\n  same ids, different order")
	}
	return b.String()
}

// testBodyWordsNeedBodies: a word found only in bodies is found only
// when Bodies is true, and then in exactly the messages that have it.
func testBodyWordsNeedBodies(t *testing.T, e *searchEnv) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(searchSeed, 3))
	checked := 0
	for range 40 {
		m := e.msgs[r.IntN(len(e.msgs))]
		for _, w := range m.corpus.BodyWords {
			q := &mQuery{terms: []mTerm{{words: tokens(w), prefix: true}}}
			if len(e.expect(q, false, nil)) > 0 {
				continue // also in some subject, name or attachment
			}
			want := e.expect(q, true, nil)
			if !slices.Contains(want, m.id) {
				t.Fatalf("model: body word %q of message %d is not in its body %q", w, m.id, m.raw[fBody])
			}
			parsed, err := search.Parse(w, e.now)
			if err != nil {
				t.Fatal(err)
			}
			for _, bodies := range []bool{false, true} {
				rows, _, err := e.st.Messages(ctx, &store.Filter{Query: parsed, Bodies: bodies, Limit: 1 << 20})
				if err != nil {
					t.Fatal(err)
				}
				var got []int64
				for _, r := range rows {
					got = append(got, r.ID)
				}
				exp := want
				if !bodies {
					exp = nil
				}
				if !slices.Equal(got, exp) {
					t.Errorf("body word %q, Bodies=%v: store %v, want %v", w, bodies, got, exp)
				}
			}
			checked++
		}
	}
	if checked < 40 {
		t.Errorf("only %d body-only words checked", checked)
	}
	t.Logf("%d body-only words: found only with Bodies", checked)
}

// testPaging walks queries' results with the Before cursor in small
// pages: every id exactly once, in order, with more set on all pages but the
// last, and Count ignoring the cursor.
func testPaging(t *testing.T, e *searchEnv) {
	ctx := context.Background()
	for _, qs := range []string{"", "is:read", "re", "has:attachment -is:flagged", "in:INBOX after:2025-03-01", "the"} {
		parsed, err := search.Parse(qs, e.now)
		if err != nil {
			t.Fatal(err)
		}
		for _, bodies := range []bool{false, true} {
			all, _, err := e.st.Messages(ctx, &store.Filter{Query: parsed, Bodies: bodies, Limit: 1 << 20})
			if err != nil {
				t.Fatal(err)
			}
			total, _ := e.st.Count(ctx, &store.Filter{Query: parsed, Bodies: bodies})
			if total != len(all) || total < 20 {
				t.Fatalf("%q: Count %d, Messages %d (want at least 20 to page)", qs, total, len(all))
			}
			for _, limit := range []int{1, 7, 50, total, total + 1} {
				if limit == 1 && total > 300 {
					continue
				}
				seen := map[int64]int{}
				var order []int64
				var before int64
				for page := 0; ; page++ {
					f := &store.Filter{Query: parsed, Bodies: bodies, Before: before, Limit: limit}
					rows, more, err := e.st.Messages(ctx, f)
					if err != nil {
						t.Fatal(err)
					}
					// Count ignores the cursor: checked on the first pages, then every
					// 16th and the last (each Count reads every match).
					if page < 3 || page%16 == 0 || !more {
						if n, _ := e.st.Count(ctx, f); n != total {
							t.Errorf("%q page %d: Count with a cursor = %d, want %d", qs, page, n, total)
						}
					}
					for _, r := range rows {
						seen[r.ID]++
						order = append(order, r.ID)
					}
					if len(rows) > limit {
						t.Fatalf("%q: page of %d rows with limit %d", qs, len(rows), limit)
					}
					if !more {
						break
					}
					if len(rows) == 0 {
						t.Fatalf("%q: more=true on an empty page", qs)
					}
					before = rows[len(rows)-1].ID
					if page > total+1 {
						t.Fatalf("%q: paging does not end", qs)
					}
				}
				if len(order) != total {
					t.Errorf("%q bodies=%v limit %d: paged %d ids, want %d", qs, bodies, limit, len(order), total)
				}
				for id, n := range seen {
					if n != 1 {
						t.Errorf("%q limit %d: id %d seen %d times", qs, limit, id, n)
					}
				}
				for i := range order {
					if order[i] != all[i].ID {
						t.Errorf("%q limit %d: id %d at %d, want %d", qs, limit, order[i], i, all[i].ID)
						break
					}
				}
			}
		}
	}
}

// testNewestFirst: ids order messages by date, so descending id is
// newest first.
func testNewestFirst(t *testing.T, e *searchEnv) {
	for i := 1; i < len(e.msgs); i++ {
		a, b := e.msgs[i-1], e.msgs[i]
		if a.id <= b.id || a.date.Before(b.date) {
			t.Fatalf("row %d (id %d, %s) before row %d (id %d, %s): not newest first", i-1, a.id, a.date, i, b.id, b.date)
		}
	}
}

// testAccountsHidden: with Filter.Accounts the other account is gone
// from every query, even one that names it, from Count and from Message.
func testAccountsHidden(t *testing.T, e *searchEnv) {
	ctx := context.Background()
	var others []*modelMsg
	for _, m := range e.msgs {
		if m.account == "other" {
			others = append(others, m)
		}
	}
	if len(others) < len(e.msgs)/20 || len(others) > len(e.msgs)/5 {
		t.Fatalf("%d messages in account other; want about a tenth", len(others))
	}
	all, _, _ := e.st.Messages(ctx, &store.Filter{Accounts: []string{"other"}, Limit: 1 << 20})
	if len(all) != len(others) {
		t.Errorf("Accounts [other] lists %d messages, the model %d", len(all), len(others))
	}
	for _, qs := range []string{"account:other", "", "in:INBOX account:other", "account:acct account:other is:read"} {
		parsed, err := search.Parse(qs, e.now)
		if err != nil {
			t.Fatal(err)
		}
		for _, bodies := range []bool{false, true} {
			f := &store.Filter{Query: parsed, Bodies: bodies, Accounts: []string{"acct"}, Limit: 1 << 20}
			rows, _, err := e.st.Messages(ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rows {
				if r.Account != "acct" {
					t.Errorf("%q with Accounts [acct]: row %d of account %s", qs, r.ID, r.Account)
				}
			}
			n, _ := e.st.Count(ctx, f)
			if n != len(rows) {
				t.Errorf("%q with Accounts [acct]: Count %d, rows %d", qs, n, len(rows))
			}
			if strings.HasPrefix(qs, "account:other") && len(rows) != 0 {
				t.Errorf("%q with Accounts [acct]: %d rows, want none", qs, len(rows))
			}
		}
	}
	// Words only the other account has are not found at all.
	for _, m := range others[:min(len(others), 10)] {
		w := m.corpus.BodyWords[len(m.corpus.BodyWords)-1]
		parsed, _ := search.Parse(w, e.now)
		rows, _, _ := e.st.Messages(ctx, &store.Filter{Query: parsed, Bodies: true, Accounts: []string{"acct"}, Limit: 10})
		if len(rows) != 0 {
			t.Errorf("%q (a word of account other) with Accounts [acct]: %d rows", w, len(rows))
		}
		rows, _, _ = e.st.Messages(ctx, &store.Filter{Query: parsed, Bodies: true, Limit: 10})
		if len(rows) != 1 || rows[0].ID != m.id {
			t.Errorf("%q without Accounts: %d rows, want message %d", w, len(rows), m.id)
		}
		if _, err := e.st.Message(ctx, m.id, []string{"acct"}); !errors.Is(err, store.ErrNoMessage) {
			t.Errorf("Message(%d) of account other with Accounts [acct]: %v, want ErrNoMessage", m.id, err)
		}
		if _, err := e.st.Message(ctx, m.id, []string{}); !errors.Is(err, store.ErrNoMessage) {
			t.Errorf("Message(%d) with Accounts [] (none visible): %v, want ErrNoMessage", m.id, err)
		}
	}
	empty, _, _ := e.st.Messages(ctx, &store.Filter{Accounts: []string{}, Limit: 10})
	if len(empty) != 0 {
		t.Errorf("Accounts [] (none visible) lists %d messages", len(empty))
	}
}

// testSizeBounds: a size bound the model says nothing meets must
// match nothing. smaller:0 means size < 0 bytes; larger: beyond any int64
// means nothing is larger.
func testSizeBounds(t *testing.T, e *searchEnv) {
	ctx := context.Background()
	for _, c := range []struct {
		q    string
		pred func(*modelMsg) bool
		why  string
	}{
		{"smaller:0", func(m *modelMsg) bool { return m.size < 0 }, "search.Parse stores Smaller=0, which Filter reads as no bound"},
		{"smaller:0.5", func(m *modelMsg) bool { return m.size < 1 }, "int64(0.5) = 0, which Filter reads as no bound"},
		{"smaller:0k", func(m *modelMsg) bool { return m.size < 0 }, "search.Parse stores Smaller=0, which Filter reads as no bound"},
		{"larger:1000000000000G", func(m *modelMsg) bool { return false }, "parseSize overflows int64 to a negative Larger, which Parse drops"},
		{"smaller:1k", func(m *modelMsg) bool { return m.size < 1024 }, ""},
		{"larger:0", func(m *modelMsg) bool { return m.size > 0 }, ""},
	} {
		parsed, err := search.Parse(c.q, e.now)
		if err != nil {
			continue // refusing the bound is a fine answer too
		}
		q := &mQuery{preds: []func(*modelMsg) bool{c.pred}}
		want := e.expect(q, false, nil)
		f := &store.Filter{Query: parsed, Limit: 1 << 20}
		rows, _, err := e.st.Messages(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != len(want) {
			t.Errorf("BUG %q matches %d messages, want %d (%s)", c.q, len(rows), len(want), c.why)
		}
	}
}

// TestSearchWordsMatchIndex: store.Words says it splits text "the way the
// index does"; a query's words are joined into one FTS phrase, so a
// character Words splits on but unicode61 keeps inside a token makes text
// unfindable by its own words. Private-use characters (category Co, such as
// U+F8FF, the Apple logo in some signatures) are token characters for
// unicode61 ("L* N* Co") but separators for Words.
func TestSearchWordsMatchIndex(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(filepath.Join(t.TempDir(), store.File))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	aid, err := st.EnsureAccount(ctx, "acct", "imap")
	if err != nil {
		t.Fatal(err)
	}
	f := &store.Folder{AccountID: aid, Name: "INBOX"}
	if err := st.SaveFolder(ctx, f); err != nil {
		t.Fatal(err)
	}
	subjects := []string{
		"Quarterly\uF8FFreport",   // private use, Co
		"Caf\u0065\u0301 menu",    // combining acute, Mn
		"Größe Übersicht",         // precomposed
		"x²y footnote",            // No
		"ǅemal title-case",        // Lt
		"Ⅻ roman numeral",         // Nl
		"İstanbul dotted capital", // lower-cases to two runes
	}
	var msgs []store.NewMessage
	for i, s := range subjects {
		msgs = append(msgs, store.NewMessage{UID: uint32(i + 1), Subject: s, Date: time.Date(2025, 1, 1+i, 0, 0, 0, 0, time.UTC),
			From: store.Address{Email: "a@example.com"}, Text: "body " + s})
	}
	if err := st.AddMessages(ctx, f, msgs, uint32(len(msgs))); err != nil {
		t.Fatal(err)
	}
	rows, _, err := st.Messages(ctx, &store.Filter{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	idOf := map[string]int64{}
	for _, r := range rows {
		idOf[r.Subject] = r.ID
	}
	for _, s := range subjects {
		// The whole subject as a phrase, and its first word (text before
		// the first space) alone: both must find the message.
		first := strings.Fields(s)[0]
		for _, q := range []string{`subject:"` + s + `"`, `"` + first + `"`} {
			parsed, err := search.Parse(q, time.Now())
			if err != nil {
				t.Fatalf("%q: %v", q, err)
			}
			for _, bodies := range []bool{false, true} {
				rows, _, err := st.Messages(ctx, &store.Filter{Query: parsed, Bodies: bodies, Limit: 10})
				if err != nil {
					t.Fatal(err)
				}
				found := false
				for _, r := range rows {
					found = found || r.ID == idOf[s]
				}
				if !found {
					t.Errorf("BUG store.Words: the query %q (bodies=%v) does not find the message with subject %q: Words gives %q, while the index keeps %q as one token",
						q, bodies, s, store.Words(first), first)
				}
			}
		}
	}
}

// TestSearchAfterUpgrade: a store of schema 3 (search indexes with prefix
// indexes) is upgraded on open, its indexes made anew and filled from the
// stored messages; every search then answers as on a store made new.
//
// What is checked is the rebuilt indexes, not how search scales: a third of TestSearch's corpus.
func TestSearchAfterUpgrade(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), store.File)
	e, err := newSearchEnv(path, searchMessages/3)
	if err != nil {
		t.Fatal(err)
	}
	e.st.Close()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`DROP TABLE meta_fts`, `DROP TABLE body_fts`,
		`CREATE VIRTUAL TABLE meta_fts USING fts5(subject, from_addr, to_addr, cc_addr, attachments,
			content='', contentless_delete=1, tokenize='unicode61 remove_diacritics 2', prefix='2 3')`,
		`CREATE VIRTUAL TABLE body_fts USING fts5(text, content='', contentless_delete=1,
			tokenize='unicode61 remove_diacritics 2', prefix='2 3')`,
		`UPDATE meta SET value='3' WHERE key='schema'`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.Close()
	if e.st, err = store.Open(path); err != nil {
		t.Fatal(err)
	}
	defer e.st.Close()
	t.Run("AgainstModel", func(t *testing.T) { testAgainstModel(t, e) })
	t.Run("BodyWordsNeedBodies", func(t *testing.T) { testBodyWordsNeedBodies(t, e) })
}
