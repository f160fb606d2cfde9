package store_test

// The model and query generator that search_test.go checks the store's search against.

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net/mail"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/postern-mcp/postern/internal/corpus"
	"github.com/postern-mcp/postern/internal/mailparse"
	"github.com/postern-mcp/postern/internal/search"
	"github.com/postern-mcp/postern/internal/source"
	"github.com/postern-mcp/postern/internal/store"
)

const (
	searchSeed     = 20250615
	searchMessages = 1500
)

// Searchable fields of the model, each its own token sequence as in the
// index: meta_fts has one column per field, body_fts the body.
const (
	fSubject = iota
	fFrom
	fTo
	fCc
	fAtt
	fBody
	nFields
)

var fieldOf = map[string]int{"subject": fSubject, "from": fFrom, "to": fTo, "cc": fCc}

type modelMsg struct {
	id      int64
	account string
	folder  string
	uid     uint32
	flags   int
	size    int64
	date    time.Time
	hasAtt  bool
	nm      *store.NewMessage // what was stored of it (headers, list, addresses)
	raw     [nFields]string   // the field's text as given to the store
	words   [nFields][]string // splitWords of raw: lower-case, diacritics kept (to write queries with)
	toks    [nFields][]string // normalised tokens, as the index holds them
	corpus  *corpus.Message
}

// fold maps the lower-case letters with diacritics that the corpus uses to
// what FTS5's unicode61 remove_diacritics 2 makes of them. Letters without a
// canonical decomposition (ø ł ß þ œ) and Cyrillic й ё stay as they are.
// testModelTokens checks this table against SQLite for every word of
// the model, so a new corpus character shows up there, not as a search bug.
var fold = map[rune]rune{
	'à': 'a', 'á': 'a', 'â': 'a', 'ã': 'a', 'ä': 'a', 'å': 'a',
	'ç': 'c', 'ć': 'c', 'č': 'c',
	'è': 'e', 'é': 'e', 'ê': 'e', 'ë': 'e',
	'ì': 'i', 'í': 'i', 'î': 'i', 'ï': 'i',
	'ñ': 'n', 'ń': 'n',
	'ò': 'o', 'ó': 'o', 'ô': 'o', 'õ': 'o', 'ö': 'o',
	'ù': 'u', 'ú': 'u', 'û': 'u', 'ü': 'u',
	'ý': 'y', 'ÿ': 'y',
	'ś': 's', 'š': 's', 'ž': 'z', 'ź': 'z', 'ż': 'z',
}

func normWord(w string) string {
	var b strings.Builder
	for _, r := range w {
		if unicode.Is(unicode.Mn, r) {
			continue // a combining mark is a diacritic: removed
		}
		if f, ok := fold[r]; ok {
			r = f
		}
		b.WriteRune(r)
	}
	return b.String()
}

// splitWords is the model's word splitter, from SQLite's documentation of
// unicode61: a token is a run of letters, numbers and private-use characters
// (categories L*, N*, Co; combining marks stay with their letter), folded to
// lower case. testModelTokens checks it against SQLite, never against the store.
func splitWords(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.In(r, unicode.L, unicode.N, unicode.Co, unicode.Mn)
	})
}

// tokens is the model's tokenizer: splitWords, then diacritics removed.
func tokens(s string) []string {
	ws := splitWords(s)
	for i, w := range ws {
		ws[i] = normWord(w)
	}
	return ws
}

// addrField is the model's text of an address field: every name and every
// email in order (only the words count, so separators do not matter).
func addrField(as ...store.Address) string {
	var b strings.Builder
	for _, a := range as {
		b.WriteString(a.Name + " " + a.Email + " ")
	}
	return b.String()
}

type searchEnv struct {
	st      *store.Store
	msgs    []*modelMsg // newest first (descending id)
	byID    map[int64]*modelMsg
	folders []string
	now     time.Time
}

func newSearchEnv(path string, n int) (*searchEnv, error) {
	ctx := context.Background()
	gen := corpus.Generate(corpus.Options{Seed: searchSeed, Messages: n})
	rng := rand.New(rand.NewPCG(searchSeed, 1))

	// The corpus has no Cc; give about a fifth of the messages one or two Cc
	// addresses drawn from the corpus's senders (non-ASCII names encoded as
	// RFC 2047 by net/mail), so that cc: has something to find.
	pool := map[string]string{}
	for _, m := range gen {
		pool[m.FromEmail] = m.FromName
	}
	var poolKeys []string
	for k := range pool {
		poolKeys = append(poolKeys, k)
	}
	sort.Strings(poolKeys)

	st, err := store.Open(path)
	if err != nil {
		return nil, err
	}
	type key struct{ account, folder string }
	batches := map[key][]store.NewMessage{}
	var order []key
	uids := map[key]uint32{}
	origin := map[key]map[uint32]*corpus.Message{}
	added := map[key]map[uint32]*store.NewMessage{}
	for i := range gen {
		m := &gen[i]
		raw := m.Raw
		if rng.Float64() < 0.2 {
			var cc []string
			for range 1 + rng.IntN(2) {
				e := poolKeys[rng.IntN(len(poolKeys))]
				cc = append(cc, (&mail.Address{Name: pool[e], Address: e}).String())
			}
			raw = append([]byte("Cc: "+strings.Join(cc, ", ")+"\r\n"), raw...)
		}
		p, err := mailparse.Parse(bytes.NewReader(raw))
		if err != nil {
			return nil, fmt.Errorf("parsing corpus message %d: %w", i, err)
		}
		account := "acct"
		if rng.Float64() < 0.1 {
			account = "other"
		}
		k := key{account, m.Folder}
		if _, ok := batches[k]; !ok {
			order = append(order, k)
			origin[k] = map[uint32]*corpus.Message{}
			added[k] = map[uint32]*store.NewMessage{}
		}
		uids[k]++
		nm := store.NewMessage{UID: uids[k], Flags: store.FlagBits(m.Flags), InternalDate: m.Date.Add(5 * time.Second), ModSeq: uint64(i + 1)}
		source.Fill(&nm, p) // what a sync stores of it
		batches[k] = append(batches[k], nm)
		origin[k][nm.UID] = m
	}
	accountIDs := map[string]int64{}
	folderSet := map[string]bool{}
	for _, k := range order {
		aid, ok := accountIDs[k.account]
		if !ok {
			if aid, err = st.EnsureAccount(ctx, k.account, "imap"); err != nil {
				return nil, err
			}
			accountIDs[k.account] = aid
		}
		f := &store.Folder{AccountID: aid, Name: k.folder, Delim: "/"}
		if err := st.SaveFolder(ctx, f); err != nil {
			return nil, err
		}
		folderSet[k.folder] = true
		b := batches[k]
		for len(b) > 0 {
			n := min(len(b), 100)
			if err := st.AddMessages(ctx, f, b[:n], b[n-1].UID); err != nil {
				return nil, err
			}
			b = b[n:]
		}
	}

	for k, b := range batches {
		for i := range b {
			added[k][b[i].UID] = &b[i]
		}
	}

	// The model: the store's ids, newest first, and what was added under each.
	rows, more, err := st.Messages(ctx, &store.Filter{Limit: 1 << 20})
	if err != nil {
		return nil, err
	}
	if more || len(rows) != len(gen) {
		return nil, fmt.Errorf("the store lists %d messages (more=%v); %d were added", len(rows), more, len(gen))
	}
	env := &searchEnv{st: st, byID: map[int64]*modelMsg{}}
	for _, r := range rows {
		k := key{r.Account, r.Folder}
		nm := added[k][r.UID]
		if nm == nil {
			return nil, fmt.Errorf("row %d (%s/%s uid %d) is no message that was added", r.ID, r.Account, r.Folder, r.UID)
		}
		var attNames []string
		for _, a := range nm.Attachments {
			attNames = append(attNames, a.Name)
		}
		// The Date header is what the store orders by: every internal date
		// is five seconds after it.
		mm := &modelMsg{
			id: r.ID, account: k.account, folder: k.folder, uid: nm.UID, flags: nm.Flags, size: nm.Size, date: nm.Date,
			hasAtt: len(nm.Attachments) > 0, nm: nm,
			corpus: origin[k][nm.UID],
		}
		mm.raw[fSubject] = nm.Subject
		mm.raw[fFrom] = addrField(nm.From)
		mm.raw[fTo] = addrField(nm.To...)
		mm.raw[fCc] = addrField(nm.Cc...)
		mm.raw[fAtt] = strings.Join(attNames, " ")
		mm.raw[fBody] = nm.Text
		for f := range nFields {
			mm.words[f] = splitWords(mm.raw[f])
			mm.toks[f] = tokens(mm.raw[f])
		}
		env.msgs = append(env.msgs, mm)
		env.byID[r.ID] = mm
	}
	for f := range folderSet {
		env.folders = append(env.folders, f)
	}
	sort.Strings(env.folders)
	// Relative dates count back from a day and a half after the newest message.
	env.now = env.msgs[0].date.Add(36 * time.Hour)
	return env, nil
}

// ---- the brute-force matcher ----

// mTerm is a text condition of the model.
type mTerm struct {
	field  string   // "", from, to, cc, subject
	words  []string // normalised
	prefix bool     // the last word may start a longer token
	neg    bool
}

// mQuery is a query as the generator means it.
type mQuery struct {
	terms   []mTerm
	preds   []func(*modelMsg) bool // non-text operators; all must hold
	folders []string               // in: any of them, when there are some
	accts   []string               // account: any of them, when there are some
	groups  []mGroup               // each must hold too
	text    string                 // as written
	ops     []string               // operators written, for coverage
}

// mGroup is a parenthesised condition: any of its alternatives (none, when neg).
type mGroup struct {
	alts []*mQuery
	neg  bool
}

// phraseIn reports whether words occur as consecutive tokens of seq.
func phraseIn(seq, words []string, prefix bool) bool {
	n := len(words)
	if n == 0 {
		return false
	}
	for i := 0; i+n <= len(seq); i++ {
		ok := true
		for k := 0; k < n; k++ {
			if k == n-1 && prefix {
				ok = strings.HasPrefix(seq[i+k], words[k])
			} else {
				ok = seq[i+k] == words[k]
			}
			if !ok {
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// termHits reports whether t's words are in m: in its field, or for a plain
// term in any meta field, or (bodies) in the attachment names and the body.
func termHits(t mTerm, m *modelMsg, bodies bool) bool {
	if t.field != "" {
		return phraseIn(m.toks[fieldOf[t.field]], t.words, t.prefix)
	}
	for f := range nFields {
		if (f == fBody || f == fAtt) && !bodies {
			continue
		}
		if phraseIn(m.toks[f], t.words, t.prefix) {
			return true
		}
	}
	return false
}

func (q *mQuery) matches(m *modelMsg, bodies bool) bool {
	if len(q.folders) > 0 && !slices.ContainsFunc(q.folders, func(f string) bool { return inFolder(m, f) }) {
		return false
	}
	if len(q.accts) > 0 && !slices.Contains(q.accts, m.account) {
		return false
	}
	for _, p := range q.preds {
		if !p(m) {
			return false
		}
	}
	for _, t := range q.terms {
		if termHits(t, m, bodies) == t.neg {
			return false
		}
	}
	for _, g := range q.groups {
		if slices.ContainsFunc(g.alts, func(a *mQuery) bool { return a.matches(m, bodies) }) == g.neg {
			return false
		}
	}
	return true
}

// expect lists the ids q matches, newest first, among the given accounts (nil: all).
func (e *searchEnv) expect(q *mQuery, bodies bool, accounts []string) []int64 {
	var out []int64
	for _, m := range e.msgs {
		if accounts != nil && !slices.Contains(accounts, m.account) {
			continue
		}
		if q.matches(m, bodies) {
			out = append(out, m.id)
		}
	}
	return out
}

// ---- the query generator ----

// qb builds one query: text parts and operator parts in a random order, the
// written query and its meaning side by side.
type qb struct {
	e     *searchEnv
	r     *rand.Rand
	parts []qpart
}

type qpart struct {
	text   string // as written, without the prefix cut
	term   *mTerm // nil for an operator
	bare   bool   // an unquoted word with no field and no '-': may become the prefix
	op     string // operator name for coverage
	pred   func(*modelMsg) bool
	folder string // in: this folder
	acct   string // account: this account
}

func (b *qb) randMsg() *modelMsg { return b.e.msgs[b.r.IntN(len(b.e.msgs))] }

// pickWords picks n consecutive words of field f of some message that has them.
func (b *qb) pickWords(f, n int) []string {
	for range 1000 {
		m := b.randMsg()
		ws := m.words[f]
		if len(ws) < n {
			continue
		}
		i := b.r.IntN(len(ws) - n + 1)
		return slices.Clone(ws[i : i+n])
	}
	return nil
}

// casing writes a word as a person might: as is, capitalised, upper-cased,
// or without its diacritics.
func (b *qb) casing(w string) string {
	switch b.r.IntN(6) {
	case 0:
		r := []rune(w)
		r[0] = unicode.ToUpper(r[0])
		return string(r)
	case 1:
		return strings.ToUpper(w)
	case 2:
		return normWord(w)
	}
	return w
}

func (b *qb) addTerm(field string, words []string, quoted, neg bool, sep string) {
	var ws []string
	for _, w := range words {
		c := b.casing(w)
		if c == "OR" && !quoted {
			c = "Or" // OR alone, in capitals, is the operator
		}
		ws = append(ws, c)
	}
	text := strings.Join(ws, sep)
	if quoted {
		text = `"` + text + `"`
	}
	op := ""
	if field != "" {
		text = field + ":" + text
		op = field + ":"
	}
	if neg {
		text = "-" + text
	}
	var nw []string
	for _, w := range words {
		nw = append(nw, tokens(w)...)
	}
	b.parts = append(b.parts, qpart{text: text, term: &mTerm{field: field, words: nw, neg: neg}, bare: field == "" && !quoted && !neg, op: op})
}

func (b *qb) addOp(text, op string, pred func(*modelMsg) bool) {
	b.parts = append(b.parts, qpart{text: text, op: op, pred: pred})
}

// randomText adds one text condition drawn from the stored messages.
func (b *qb) randomText() {
	fields := []int{fSubject, fSubject, fFrom, fTo, fCc, fAtt, fBody, fBody}
	f := fields[b.r.IntN(len(fields))]
	n := 1
	if b.r.IntN(3) == 0 {
		n = 2 + b.r.IntN(2)
	}
	words := b.pickWords(f, n)
	if words == nil {
		words = b.pickWords(fSubject, 1)
		f = fSubject
	}
	field := ""
	switch b.r.IntN(3) {
	case 0:
		for name, x := range fieldOf {
			if x == f {
				field = name
			}
		}
	}
	neg := b.r.IntN(5) == 0
	quoted := n > 1 || b.r.IntN(6) == 0
	sep := " "
	if n > 1 && b.r.IntN(4) == 0 {
		quoted, sep = false, "-" // an unquoted phrase: foo-bar
	}
	b.addTerm(field, words, quoted, neg, sep)
}

func dateIn(b *qb) time.Time {
	lo, hi := b.e.msgs[len(b.e.msgs)-1].date, b.e.msgs[0].date
	d := lo.Add(time.Duration(b.r.Int64N(int64(hi.Sub(lo)))))
	return time.Date(d.Year(), d.Month(), d.Day(), 0, 0, 0, 0, time.UTC)
}

// randomOp adds one non-text operator.
func (b *qb) randomOp() {
	e := b.e
	switch b.r.IntN(13) {
	case 0:
		name := e.folders[b.r.IntN(len(e.folders))]
		written := name
		switch b.r.IntN(4) {
		case 0:
			written = strings.ToLower(name) // any case finds the folder
		case 1:
			written = strings.ReplaceAll(strings.ToUpper(name), "/", ".") // . is a separator too
		}
		if strings.Contains(written, " ") {
			written = `"` + written + `"`
		}
		b.parts = append(b.parts, qpart{text: "in:" + written, op: "in:", folder: name})
	case 1:
		a := []string{"acct", "other", "nobody"}[b.r.IntN(3)]
		b.parts = append(b.parts, qpart{text: "account:" + a, op: "account:", acct: a})
	case 2:
		forms := []struct {
			w    string
			bit  int
			want bool
		}{
			{"is:unread", store.FlagSeen, false}, {"is:read", store.FlagSeen, true},
			{"-is:unread", store.FlagSeen, true}, {"-is:read", store.FlagSeen, false},
			{"is:flagged", store.FlagFlagged, true}, {"-is:flagged", store.FlagFlagged, false}, {"is:starred", store.FlagFlagged, true},
			{"is:answered", store.FlagAnswered, true}, {"-is:answered", store.FlagAnswered, false}, {"is:replied", store.FlagAnswered, true},
		}
		x := forms[b.r.IntN(len(forms))]
		// one is: per flag in a query, so that no two contradict
		for _, p := range b.parts {
			if p.op == "is:"+strconv.Itoa(x.bit) {
				return
			}
		}
		b.addOp(x.w, "is:"+strconv.Itoa(x.bit), func(m *modelMsg) bool { return (m.flags&x.bit != 0) == x.want })
	case 3:
		b.addOp([]string{"has:attachment", "has:attachments"}[b.r.IntN(2)], "has:", func(m *modelMsg) bool { return m.hasAtt })
	case 4, 5:
		op := []string{"after", "before"}[b.r.IntN(2)]
		var d time.Time
		var w string
		switch b.r.IntN(3) {
		case 0:
			d = dateIn(b)
			w = d.Format("2006-01-02")
		case 1:
			d = dateIn(b)
			w = d.Format("2006/01/02")
		case 2:
			n := 1 + b.r.IntN(20)
			unit := "dwmy"[b.r.IntN(4)]
			switch unit {
			case 'd':
				n *= 10
				d = e.now.AddDate(0, 0, -n)
			case 'w':
				d = e.now.AddDate(0, 0, -7*n)
			case 'm':
				d = e.now.AddDate(0, -n, 0)
			case 'y':
				n = 1 + n%2
				d = e.now.AddDate(-n, 0, 0)
			}
			w = strconv.Itoa(n) + string(unit)
		}
		if op == "after" {
			b.addOp("after:"+w, "after:", func(m *modelMsg) bool { return !m.date.Before(d) })
		} else {
			b.addOp("before:"+w, "before:", func(m *modelMsg) bool { return m.date.Before(d) })
		}
	case 6, 7:
		op := []string{"larger", "smaller"}[b.r.IntN(2)]
		// a threshold among the stored sizes, written in some unit
		n := e.msgs[b.r.IntN(len(e.msgs))].size
		var w string
		switch b.r.IntN(4) {
		case 0:
			w = strconv.FormatInt(n, 10)
		case 1:
			n = n >> 10
			w = strconv.FormatInt(n, 10) + "k"
			n <<= 10
		case 2:
			n = n >> 10
			w = strconv.FormatInt(n, 10) + "KB"
			n <<= 10
		case 3:
			tenths := max(n*10>>20, 1)
			w = strconv.FormatFloat(float64(tenths)/10, 'f', -1, 64) + "M"
			n = int64(float64(tenths) / 10 * (1 << 20))
		}
		if op == "larger" {
			b.addOp("larger:"+w, "larger:", func(m *modelMsg) bool { return m.size > n })
		} else {
			b.addOp("smaller:"+w, "smaller:", func(m *modelMsg) bool { return m.size < n })
		}
	case 8:
		b.randomMatch()
	default:
		b.randomText()
	}
}

// lowerHas: the text is in s, case ignored (the model of *text*, header:, list:, body:).
func lowerHas(s, text string) bool {
	return strings.Contains(strings.ToLower(s), strings.ToLower(strings.TrimSpace(text)))
}

// underDomain: email's domain is d or below it.
func underDomain(email, d string) bool {
	_, got, _ := strings.Cut(strings.ToLower(email), "@")
	d = strings.ToLower(d)
	return got == d || strings.HasSuffix(got, "."+d)
}

// randomMatch adds one of the operators rules brought: from:@domain, *text*, header:, list:,
// body:, is:list, is:authenticated, drawn from a stored message.
func (b *qb) randomMatch() {
	m := b.randMsg()
	nm := m.nm
	neg := b.r.IntN(5) == 0
	pre := ""
	if neg {
		pre = "-"
	}
	add := func(text, op string, pred func(*modelMsg) bool) {
		if neg {
			b.addOp(pre+text, op, func(x *modelMsg) bool { return !pred(x) })
		} else {
			b.addOp(text, op, pred)
		}
	}
	frag := func(s string) string {
		rs := []rune(s)
		if len(rs) == 0 {
			return "a"
		}
		i := b.r.IntN(len(rs))
		out := string(rs[i:min(len(rs), i+2+b.r.IntN(6))])
		if b.r.IntN(3) == 0 {
			out = strings.ToUpper(out)
		}
		if strings.TrimSpace(out) == "" {
			return "a"
		}
		return out
	}
	switch b.r.IntN(8) {
	case 0:
		_, d, _ := strings.Cut(nm.From.Email, "@")
		if i := strings.Index(d, "."); i >= 0 && b.r.IntN(2) == 0 {
			d = d[i+1:]
		}
		if d == "" {
			d = "example.com"
		}
		add("from:@"+d, "from:", func(x *modelMsg) bool { return underDomain(x.nm.From.Email, d) })
	case 1:
		d := []string{"example.com", "example.org", "com"}[b.r.IntN(3)]
		field := []string{"to", "cc"}[b.r.IntN(2)]
		add(field+":@"+d, field+":", func(x *modelMsg) bool {
			as := x.nm.To
			if field == "cc" {
				as = x.nm.Cc
			}
			return slices.ContainsFunc(as, func(a store.Address) bool { return underDomain(a.Email, d) })
		})
	case 2:
		f := frag(nm.Subject)
		add("subject:"+search.Quote("*"+f+"*"), "subject:", func(x *modelMsg) bool { return lowerHas(x.nm.Subject, f) })
	case 3:
		f := frag(nm.From.Name + nm.From.Email)
		add("from:"+search.Quote("*"+f+"*"), "from:", func(x *modelMsg) bool {
			return lowerHas(x.nm.From.Email, f) || lowerHas(x.nm.From.Name, f)
		})
	case 4:
		if len(nm.Headers) == 0 {
			return
		}
		h := nm.Headers[b.r.IntN(len(nm.Headers))]
		if b.r.IntN(3) == 0 {
			add("header:"+h.Name, "header:", func(x *modelMsg) bool {
				return slices.ContainsFunc(x.nm.Headers, func(g store.Header) bool { return strings.EqualFold(g.Name, h.Name) })
			})
			return
		}
		f := frag(h.Value)
		add("header:"+strings.ToLower(h.Name)+":"+search.Quote(f), "header:", func(x *modelMsg) bool {
			return slices.ContainsFunc(x.nm.Headers, func(g store.Header) bool { return strings.EqualFold(g.Name, h.Name) && lowerHas(g.Value, f) })
		})
	case 5:
		f := []string{"list", "example", "news"}[b.r.IntN(3)]
		add("list:"+f, "list:", func(x *modelMsg) bool {
			return slices.ContainsFunc(x.nm.Headers, func(g store.Header) bool { return strings.EqualFold(g.Name, "List-Id") && lowerHas(g.Value, f) })
		})
	case 6:
		f := frag(nm.Text)
		add("body:"+search.Quote(f), "body:", func(x *modelMsg) bool { return lowerHas(x.nm.Text, f) })
	case 7:
		if b.r.IntN(2) == 0 {
			add("is:list", "is:list", func(x *modelMsg) bool { return x.nm.List })
		} else {
			add("is:authenticated", "is:authenticated", func(x *modelMsg) bool { return !x.nm.Forged })
		}
	}
}

// inFolder: in: names a folder without regard to case, / and . being the
// same separator (the corpus has no two folders that differ only so).
func inFolder(m *modelMsg, name string) bool {
	key := func(s string) string { return strings.ReplaceAll(strings.ToLower(s), ".", "/") }
	return key(m.folder) == key(name)
}

// build writes the query. The last text part, when it is a bare word, is the
// prefix: sometimes it is cut short; operators after it do not change that.
func (b *qb) build() *mQuery {
	b.r.Shuffle(len(b.parts), func(i, j int) { b.parts[i], b.parts[j] = b.parts[j], b.parts[i] })
	last := -1
	for i, p := range b.parts {
		if p.term != nil {
			last = i
		}
	}
	if last >= 0 && b.parts[last].bare {
		p := &b.parts[last]
		p.term.prefix = true
		// cut the last word short (keeping at least one letter)
		rs := []rune(p.text)
		ws := p.term.words
		lw := []rune(ws[len(ws)-1])
		if b.r.IntN(2) == 0 && len(lw) > 2 {
			cut := 1 + b.r.IntN(len(lw)-1)
			if cut >= 2 || b.r.IntN(4) == 0 {
				// the written word ends with the normalised last word's runes,
				// in whatever case; cut the same number of runes off the text
				drop := len(lw) - cut
				p.text = string(rs[:len(rs)-drop])
				ws[len(ws)-1] = string(lw[:cut])
			}
		}
	}
	q := &mQuery{}
	var texts []string
	for _, p := range b.parts {
		texts = append(texts, p.text)
		if p.term != nil {
			q.terms = append(q.terms, *p.term)
		}
		if p.pred != nil {
			q.preds = append(q.preds, p.pred)
		}
		if p.folder != "" {
			q.folders = append(q.folders, p.folder)
		}
		if p.acct != "" {
			q.accts = append(q.accts, p.acct)
		}
		if p.op != "" {
			q.ops = append(q.ops, p.op)
		}
	}
	q.text = strings.Join(texts, " ")
	return q
}

// groupQuery writes a query with one or two groups of alternatives, some
// negated, before a few plain words and operators: the groups' words are
// quoted, so that the prefix (when there is one) is the plain part's.
func (e *searchEnv) groupQuery(r *rand.Rand) *mQuery {
	top := &qb{e: e, r: r}
	for range r.IntN(3) {
		if r.IntN(2) == 0 {
			top.randomText()
		} else {
			top.randomOp()
		}
	}
	var texts []string
	var groups []mGroup
	var ops []string
	for range 1 + r.IntN(2) {
		g := mGroup{neg: r.IntN(4) == 0}
		nAlts := 2 + r.IntN(2)
		if r.IntN(5) == 0 {
			nAlts = 1 // parentheses alone: merged, or a group of one when negated or with operators
		}
		var altTexts []string
		for range nAlts {
			ab := &qb{e: e, r: r}
			n := 1 + r.IntN(2)
			if nAlts == 1 {
				n = 2
			}
			for range n {
				if r.IntN(3) > 0 {
					ab.randomText()
				} else {
					ab.randomOp()
				}
			}
			if len(ab.parts) == 0 {
				ab.randomText()
			}
			for i := range ab.parts {
				if p := &ab.parts[i]; p.bare {
					p.text, p.bare = `"`+p.text+`"`, false
				}
			}
			alt := ab.build()
			altTexts = append(altTexts, alt.text)
			g.alts = append(g.alts, alt)
			ops = append(ops, alt.ops...)
		}
		t := "(" + strings.Join(altTexts, " OR ") + ")"
		if g.neg {
			t = "-" + t
		}
		texts = append(texts, t)
		groups = append(groups, g)
	}
	q := top.build()
	q.groups = groups
	q.ops = append(q.ops, ops...)
	if q.text != "" {
		texts = append(texts, q.text)
	}
	q.text = strings.Join(texts, " ")
	return q
}
