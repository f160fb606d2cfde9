package main

// The calendars-and-contacts mode (-dav): a calendar of 5,000 events and an
// address book of 2,000 contacts on a private Radicale, synced by the real
// postern binary and read back over stdio (agenda for a month,
// contacts_search), beside a plain net/http client making the same requests
// live to the same Radicale in the same run. See BENCHMARKS.md, "Calendars
// and contacts (issue 16, -dav)".
//
//	go run ./cmd/postern-bench -dav [-dav-events 5000] [-dav-contacts 2000] [-dav-reps 20] [-dav-sync-reps 3] [-dav-seed 1] [-postern PATH] [-json]
//
// It reuses -dir and -keep of the mail mode. The person's zone (time_zone) is
// UTC, so that the month postern's agenda covers is the UTC month the
// reference asks Radicale for; floating and all-day events are read in UTC by
// both. Radicale 3.1 ignores calendar-query's expand (support came in 3.2):
// the reference then expands the recurring events it gets back itself, with
// rrule-go, and the time it takes is counted, since a client must do it.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"encoding/xml"
	"errors"
	"flag"
	"fmt"
	"io"
	mrand "math/rand"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/teambition/rrule-go"

	"github.com/postern-mcp/postern/generated"
)

var (
	davMode     = flag.Bool("dav", false, "measure the sync of a calendar and an address book, "+generated.ToolAgenda+" and "+generated.ToolContactsSearch+" against the same requests made live to Radicale (see BENCHMARKS.md)")
	davEvents   = flag.Int("dav-events", 5000, "-dav: events in the calendar")
	davContacts = flag.Int("dav-contacts", 2000, "-dav: contacts in the address book")
	davReps     = flag.Int("dav-reps", 20, "-dav: timed repetitions of "+generated.ToolAgenda+" and "+generated.ToolContactsSearch+" and of their references")
	davSyncReps = flag.Int("dav-sync-reps", 3, "-dav: timed first syncs (each into an empty store) and no-change syncs, and as many references")
	davSeed     = flag.Int64("dav-seed", 1, "-dav: seed of the generated events and contacts")
	davPutEach  = flag.Bool("dav-put-each", false, "-dav: PUT each object alone (slow on Radicale 3.1), not each collection whole")
	davRadicale = flag.String("radicale", "", "-dav: the .ci/radicale script (default: the module's)")
)

const (
	davUser     = "bench"
	davCalendar = "work"
	davBook     = "people"
	davScopes   = generated.ScopeRead
	davBatch    = 200              // objects per multiget, as postern's sync asks (internal/source/caldav)
	davTimeout  = 2 * time.Minute  // any one request
	davLimit    = 45 * time.Minute // the whole run, unless -timeout
	davFragment = "okaf"           // part of the surname Okafor, in no first name, organisation or domain
)

var (
	// The month the agenda covers, in UTC: it holds the US change to summer
	// time (8 March) and the European one (29 March).
	davFrom = time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	davTo   = time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC)
	// The two years the events are spread over.
	davSpanStart = time.Date(2025, 7, 1, 0, 0, 0, 0, time.UTC)
	davSpanDays  = 730
)

type davReport struct {
	Machine   machineInfo `json:"machine"`
	Load      string      `json:"load_average"`
	LoadAfter string      `json:"load_average_after"`
	Radicale  string      `json:"radicale"`
	WorkDir   string      `json:"work_dir"`
	Seed      int64       `json:"seed"`
	Reps      int         `json:"reps"`
	SyncReps  int         `json:"sync_reps"`
	Data      struct {
		Events       int     `json:"events"`
		Recurring    int     `json:"recurring"`
		WithExdate   int     `json:"recurring_with_exdate"`
		WithOverride int     `json:"recurring_with_moved_instance"`
		AllDay       int     `json:"all_day"`
		Floating     int     `json:"floating"`
		Zoned        int     `json:"with_tzid"`
		UTC          int     `json:"utc"`
		Contacts     int     `json:"contacts"`
		CalendarKiB  float64 `json:"calendar_kib"`
		BookKiB      float64 `json:"address_book_kib"`
		FillSecs     float64 `json:"fill_s"` // the PUTs, untimed in the comparison
	} `json:"data"`
	Sync struct {
		First        summary `json:"first"`         // postern sync --stats into an empty store (wall, process start included)
		FirstStats   summary `json:"first_stats"`   // the time postern's stats line gives
		NoChange     summary `json:"no_change"`     // postern sync with nothing changed
		Summary      string  `json:"first_summary"` // postern's line for the account
		NoChangeLine string  `json:"no_change_summary"`
		PeakMiB      float64 `json:"first_peak_mib"`
		RefFull      summary `json:"reference_full"`       // discovery, PROPFIND getetag on each collection, multigets of every href
		RefFullToken summary `json:"reference_full_token"` // discovery, sync-collection with no token on each collection, multigets of every href
		RefDiscover  summary `json:"reference_discover"`   // discovery alone: every sync token as before
		RefEtags     summary `json:"reference_etags"`      // discovery, PROPFIND getetag on each collection (nothing to fetch)
		RefToken     summary `json:"reference_sync_token"` // discovery, sync-collection with the last token on each collection
		RefObjects   int     `json:"reference_objects"`
	} `json:"sync"`
	Agenda struct {
		Args           string   `json:"args"`
		Postern        summary  `json:"postern"`
		Reference      summary  `json:"reference"`        // calendar-query REPORT with time-range and expand, and the client's expansion
		ReferenceHTTP  summary  `json:"reference_report"` // the REPORT alone (answer read and parsed)
		PosternCount   int      `json:"postern_count"`
		ReferenceCount int      `json:"reference_count"` // instances in the objects Radicale returned, expanded by the client
		ExpectedCount  int      `json:"expected_count"`  // instances in every generated object, expanded the same way
		Objects        int      `json:"reference_objects"`
		ServerExpanded bool     `json:"server_expanded"`
		AnswerBytes    int      `json:"postern_answer_bytes"`
		Mismatch       []string `json:"mismatch,omitempty"` // instances one side has and the other not
	} `json:"agenda"`
	Contacts struct {
		Args           string   `json:"args"`
		Postern        summary  `json:"postern"`
		Reference      summary  `json:"reference"` // addressbook-query, text-match on FN or EMAIL
		PosternCount   int      `json:"postern_count"`
		ReferenceCount int      `json:"reference_count"`
		ExpectedCount  int      `json:"expected_count"` // generated contacts whose FN or an EMAIL holds the fragment
		Mismatch       []string `json:"mismatch,omitempty"`
	} `json:"contacts"`
	Ratios struct {
		FirstSync      float64 `json:"first_sync"`         // postern first sync (wall) / reference full
		FirstSyncToken float64 `json:"first_sync_token"`   // postern first sync (wall) / reference full by sync-collection
		NoChangeDisc   float64 `json:"no_change_discover"` // postern no-change sync (wall) / reference discovery alone
		NoChangeSync   float64 `json:"no_change_sync"`     // postern no-change sync (wall) / reference sync-collection
		NoChangeEtags  float64 `json:"no_change_etags"`    // postern no-change sync (wall) / reference PROPFIND getetag
		Agenda         float64 `json:"agenda"`             // postern agenda / reference REPORT and expansion
		AgendaHTTP     float64 `json:"agenda_vs_report"`   // postern agenda / reference REPORT alone
		ContactsSearch float64 `json:"contacts"`
	} `json:"ratios"`
}

// davEnv is one -dav run.
type davEnv struct {
	*mailEnv
	script, dir, base string // .ci/radicale, its folder, http://127.0.0.1:PORT/
	password          string
	hc                *http.Client
	calURL, bookURL   string
	events            []davEvent
	contacts          []davContact
}

func runDAV(posternPath string, asJSON bool, limit time.Duration) {
	// Unless -timeout was given, allow the slow fill of -dav-put-each.
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "timeout" })
	if !set {
		limit = davLimit
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		s := <-sig
		fail(fmt.Errorf("stopped by %v", s))
	}()
	time.AfterFunc(limit, func() { fail(fmt.Errorf("the run took longer than -timeout %v", limit)) })
	addCleanup(killProcs)

	if runtime.GOOS != "linux" {
		fail(errors.New("-dav needs Linux (/proc, Radicale)"))
	}
	if *davEvents < 100 || *davContacts < 50 || *davReps < 1 || *davSyncReps < 1 {
		fail(errors.New("-dav-events must be at least 100, -dav-contacts at least 50, -dav-reps and -dav-sync-reps at least 1"))
	}
	for _, p := range []string{"bash", "radicale"} {
		if _, err := exec.LookPath(p); err != nil {
			fail(fmt.Errorf("%s is not installed: bash .ci/radicale install (apt-get install radicale)", p))
		}
	}
	e := &davEnv{mailEnv: &mailEnv{postern: posternPath}, script: *davRadicale, hc: &http.Client{Timeout: davTimeout}}
	var root string
	if e.postern == "" || e.script == "" {
		var err error
		if root, err = moduleRoot(); err != nil {
			fail(err)
		}
	}
	if e.script == "" {
		e.script = filepath.Join(root, ".ci", "radicale")
	}

	var r davReport
	r.Machine = machine()
	r.Load = loadAverage()
	r.Seed, r.Reps, r.SyncReps = *davSeed, *davReps, *davSyncReps
	r.Radicale = "Radicale " + firstLine(output(context.Background(), nil, "radicale", "--version"))

	r.WorkDir = e.workspace("postern-bench-dav-", root)

	e.startRadicale()
	rng := mrand.New(mrand.NewSource(*davSeed))
	e.events = genEvents(rng, *davEvents)
	e.contacts = genContacts(rng, *davContacts)
	e.countData(&r)
	logf("writing %d events and %d contacts into Radicale", len(e.events), len(e.contacts))
	t0 := time.Now()
	e.fill()
	r.Data.FillSecs = secs(time.Since(t0))
	logf("filled in %.1f s", r.Data.FillSecs)

	if err := os.WriteFile(e.pwFile, []byte(e.password+"\n"), 0o600); err != nil {
		fail(err)
	}
	cfg := fmt.Sprintf("time_zone = \"UTC\"\n\n[[accounts]]\nname = %q\nkind = \"caldav\"\ncaldav = %q\ncarddav = %q\nuser = %q\npassword_cmd = %q\n",
		mailAccount, e.base, e.base, davUser, "cat "+e.pwFile)
	if err := os.WriteFile(e.cfg, []byte(cfg), 0o600); err != nil {
		fail(err)
	}

	// One uncounted round of each sync, so that Radicale's item cache is
	// built before anything is timed.
	logf("warm-up: one reference sync and one postern sync, uncounted")
	ref := e.referenceFull(true)
	r.Sync.RefObjects = ref.objects
	if ref.objects != len(e.events)+len(e.contacts) {
		fail(fmt.Errorf("reference: Radicale serves %d objects, %d were written", ref.objects, len(e.events)+len(e.contacts)))
	}
	e.freshStore()
	e.sync()

	var first, firstStats, noChange, refFull, refFullToken, refDisc, refEtags, refToken []time.Duration
	for rep := 0; rep < *davSyncReps; rep++ {
		full := e.referenceFull(false)
		ref := e.referenceFull(true)
		if full.objects != ref.objects || ref.objects != r.Sync.RefObjects {
			fail(fmt.Errorf("reference: the syncs fetched %d and %d objects, not %d", full.objects, ref.objects, r.Sync.RefObjects))
		}
		refFull, refFullToken = append(refFull, full.took), append(refFullToken, ref.took)
		e.freshStore()
		s := e.sync()
		first, firstStats = append(first, dur(s.wall)), append(firstStats, dur(s.stats))
		r.Sync.Summary, r.Sync.PeakMiB = s.summary, max(r.Sync.PeakMiB, s.peak)
		disc := e.referenceDiscover(ref.tokens)
		et := e.referenceEtags()
		tok := e.referenceToken(ref.tokens)
		refDisc, refEtags, refToken = append(refDisc, disc), append(refEtags, et), append(refToken, tok)
		s2 := e.sync()
		noChange = append(noChange, dur(s2.wall))
		r.Sync.NoChangeLine = s2.summary
		logf("sync rep %d/%d: reference full by PROPFIND %v, by sync-collection %v, postern first %v; reference no change: discovery %v, etags %v, sync token %v, postern no-change %v",
			rep+1, *davSyncReps, rnd(full.took), rnd(ref.took), rnd(dur(s.wall)), rnd(disc), rnd(et), rnd(tok), rnd(dur(s2.wall)))
	}
	r.Sync.First, r.Sync.FirstStats, r.Sync.NoChange = summarize(first), summarize(firstStats), summarize(noChange)
	r.Sync.RefFull, r.Sync.RefFullToken, r.Sync.RefDiscover = summarize(refFull), summarize(refFullToken), summarize(refDisc)
	r.Sync.RefEtags, r.Sync.RefToken = summarize(refEtags), summarize(refToken)

	// Reads: one postern connection, alternating with the reference.
	p := program{name: "postern", path: e.postern, args: []string{"mcp", "--config", e.cfg, "--scopes", davScopes}, env: e.env, initialize: true}
	c, err := start(p)
	if err != nil {
		fail(err)
	}
	if err := c.handshake(); err != nil {
		fail(err)
	}
	k := &toolCaller{c: c}
	agendaArgs := fmt.Sprintf(`{"from":%q,"to":%q}`, davFrom.Format("2006-01-02"), davTo.AddDate(0, 0, -1).Format("2006-01-02"))
	contactArgs := fmt.Sprintf(`{"query":%q,"limit":200}`, davFragment)
	r.Agenda.Args, r.Contacts.Args = agendaArgs, contactArgs
	r.Agenda.ExpectedCount = len(expectedInstances(e.events))
	r.Contacts.ExpectedCount = len(expectedContacts(e.contacts))

	var pa, ra, rh, pc, rc []time.Duration
	for rep := -1; rep < *davReps; rep++ {
		ag := e.referenceAgenda()
		d, line, err := k.call(generated.ToolAgenda, agendaArgs)
		if err != nil {
			fail(err)
		}
		pRows := agendaRows(line)
		cs := e.referenceContacts()
		d2, line2, err := k.call(generated.ToolContactsSearch, contactArgs)
		if err != nil {
			fail(err)
		}
		pNames := contactRows(line2)
		if rep < 0 {
			r.Agenda.PosternCount, r.Agenda.ReferenceCount, r.Agenda.Objects, r.Agenda.ServerExpanded = len(pRows), len(ag.keys), ag.objects, ag.expanded
			r.Agenda.AnswerBytes = len(line)
			r.Agenda.Mismatch = diffKeys("postern", pRows, "reference", ag.keys)
			r.Contacts.PosternCount, r.Contacts.ReferenceCount = len(pNames), len(cs.names)
			r.Contacts.Mismatch = diffKeys("postern", pNames, "reference", cs.names)
			e.checkAgenda(pRows)
			logf("warm-up: agenda postern %d instances, reference %d (from %d objects), expected %d; contacts postern %d, reference %d, expected %d",
				len(pRows), len(ag.keys), ag.objects, r.Agenda.ExpectedCount, len(pNames), len(cs.names), r.Contacts.ExpectedCount)
			continue
		}
		if len(pRows) != r.Agenda.PosternCount || len(ag.keys) != r.Agenda.ReferenceCount || len(pNames) != r.Contacts.PosternCount || len(cs.names) != r.Contacts.ReferenceCount {
			fail(errors.New("a count changed between repetitions though nothing was written"))
		}
		pa, ra, rh, pc, rc = append(pa, d), append(ra, ag.took), append(rh, ag.http), append(pc, d2), append(rc, cs.took)
	}
	if err := c.stop(); err != nil {
		fail(err)
	}
	r.Agenda.Postern, r.Agenda.Reference, r.Agenda.ReferenceHTTP = summarize(pa), summarize(ra), summarize(rh)
	r.Contacts.Postern, r.Contacts.Reference = summarize(pc), summarize(rc)

	r.Ratios.FirstSync = round(r.Sync.First.Median / r.Sync.RefFull.Median)
	r.Ratios.FirstSyncToken = round(r.Sync.First.Median / r.Sync.RefFullToken.Median)
	r.Ratios.NoChangeDisc = round(r.Sync.NoChange.Median / r.Sync.RefDiscover.Median)
	r.Ratios.NoChangeSync = round(r.Sync.NoChange.Median / r.Sync.RefToken.Median)
	r.Ratios.NoChangeEtags = round(r.Sync.NoChange.Median / r.Sync.RefEtags.Median)
	r.Ratios.Agenda = round(r.Agenda.Postern.Median / r.Agenda.Reference.Median)
	r.Ratios.AgendaHTTP = round(r.Agenda.Postern.Median / r.Agenda.ReferenceHTTP.Median)
	r.Ratios.ContactsSearch = round(r.Contacts.Postern.Median / r.Contacts.Reference.Median)
	r.LoadAfter = loadAverage()

	if asJSON {
		out, _ := json.MarshalIndent(r, "", "  ")
		fmt.Println(string(out))
	} else {
		r.print(os.Stdout)
	}
	cleanup()
}

func dur(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// freshStore removes postern's data folder, so that the next sync starts from
// nothing.
func (e *davEnv) freshStore() {
	if err := os.RemoveAll(filepath.Join(e.home, ".local", "share", "postern")); err != nil {
		fail(err)
	}
}

// startRadicale starts a private Radicale in work/radicale and adds the user.
func (e *davEnv) startRadicale() {
	e.dir = filepath.Join(e.work, "radicale")
	res := must(run(context.Background(), time.Minute, nil, "bash", e.script, "start", e.dir))
	addCleanup(func() { run(context.Background(), time.Minute, nil, "bash", e.script, "stop", e.dir) })
	for _, l := range strings.Split(string(res.out), "\n") {
		if v, ok := strings.CutPrefix(l, "POSTERN_RADICALE_URL="); ok {
			e.base = strings.TrimSpace(v)
		}
	}
	if e.base == "" {
		fail(fmt.Errorf(".ci/radicale start printed no URL: %s", res.out))
	}
	b := make([]byte, 12)
	rand.Read(b)
	e.password = hex.EncodeToString(b)
	must(run(context.Background(), time.Minute, nil, "bash", e.script, "adduser", e.dir, davUser, e.password))
	home := e.base + davUser + "/"
	e.calURL, e.bookURL = home+davCalendar+"/", home+davBook+"/"
	e.do("MKCALENDAR", e.calURL, "", `<?xml version="1.0" encoding="utf-8"?><C:mkcalendar xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav"><D:set><D:prop><D:displayname>Work</D:displayname>`+
		`<C:supported-calendar-component-set><C:comp name="VEVENT"/></C:supported-calendar-component-set></D:prop></D:set></C:mkcalendar>`, http.StatusCreated)
	e.do("MKCOL", e.bookURL, "", `<?xml version="1.0" encoding="utf-8"?><D:mkcol xmlns:D="DAV:" xmlns:CR="urn:ietf:params:xml:ns:carddav"><D:set><D:prop>`+
		`<D:resourcetype><D:collection/><CR:addressbook/></D:resourcetype><D:displayname>People</D:displayname></D:prop></D:set></D:mkcol>`, http.StatusCreated)
	logf("Radicale at %s (%s)", e.base, e.dir)
}

// do sends one request as the user and returns the body; a status not in ok fails the run.
func (e *davEnv) do(method, url, depth, body string, ok ...int) []byte {
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		fail(err)
	}
	req.SetBasicAuth(davUser, e.password)
	switch {
	case strings.HasPrefix(body, "BEGIN:VCALENDAR"):
		req.Header.Set("Content-Type", "text/calendar; charset=utf-8")
	case strings.HasPrefix(body, "BEGIN:VCARD"):
		req.Header.Set("Content-Type", "text/vcard; charset=utf-8")
	case body != "":
		req.Header.Set("Content-Type", "application/xml; charset=utf-8")
	}
	if depth != "" {
		req.Header.Set("Depth", depth)
	}
	resp, err := e.hc.Do(req)
	if err != nil {
		fail(fmt.Errorf("%s %s: %w", method, url, err))
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		fail(fmt.Errorf("%s %s: reading the answer: %w", method, url, err))
	}
	for _, o := range ok {
		if resp.StatusCode == o {
			return b
		}
	}
	fail(fmt.Errorf("%s %s: Radicale answered %s: %.300s", method, url, resp.Status, b))
	return nil
}

// fill writes every event and contact. By default one PUT of the whole
// calendar and one of the whole address book: Radicale splits them into one
// object per UID, named UID.ics and UID.vcf as one PUT each would be.
// With -dav-put-each it PUTs each object alone, four at a time, as a client
// would; Radicale 3.1 reads the whole collection at each PUT to check the UID
// is free, so that takes over ten minutes for 7,000 objects.
func (e *davEnv) fill() {
	if !*davPutEach {
		var cal strings.Builder
		cal.WriteString(davCalHeader + "X-WR-CALNAME:Work\r\n")
		for _, z := range davZones {
			cal.WriteString(davVTimezones[z])
		}
		for _, ev := range e.events {
			cal.WriteString(ev.comps)
		}
		cal.WriteString("END:VCALENDAR\r\n")
		e.do(http.MethodPut, e.calURL, "", cal.String(), http.StatusCreated, http.StatusNoContent)
		var book strings.Builder
		for _, c := range e.contacts {
			book.WriteString(c.data)
		}
		e.do(http.MethodPut, e.bookURL, "", book.String(), http.StatusCreated, http.StatusNoContent)
		// The whole-collection PUT keeps no display name for an address book.
		e.do("PROPPATCH", e.bookURL, "", `<?xml version="1.0" encoding="utf-8"?><D:propertyupdate xmlns:D="DAV:"><D:set><D:prop><D:displayname>People</D:displayname></D:prop></D:set></D:propertyupdate>`, http.StatusMultiStatus)
		e.checkHrefs()
		return
	}
	type put struct{ url, data string }
	jobs := make(chan put)
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				e.do(http.MethodPut, j.url, "", j.data, http.StatusCreated, http.StatusNoContent)
			}
		}()
	}
	for _, ev := range e.events {
		jobs <- put{e.calURL + ev.uid + ".ics", ev.data}
	}
	for _, c := range e.contacts {
		jobs <- put{e.bookURL + c.uid + ".vcf", c.data}
	}
	close(jobs)
	wg.Wait()
	e.checkHrefs()
}

// checkHrefs checks that Radicale holds one object per generated event and
// contact, each at UID.ics or UID.vcf.
func (e *davEnv) checkHrefs() {
	for _, x := range []struct {
		url, suffix string
		uids        []string
	}{{e.calURL, ".ics", nil}, {e.bookURL, ".vcf", nil}} {
		if x.suffix == ".ics" {
			for _, ev := range e.events {
				x.uids = append(x.uids, ev.uid)
			}
		} else {
			for _, c := range e.contacts {
				x.uids = append(x.uids, c.uid)
			}
		}
		tags := e.etags(davCollection{url: x.url})
		if len(tags) != len(x.uids) {
			fail(fmt.Errorf("Radicale holds %d objects in %s, %d were written", len(tags), x.url, len(x.uids)))
		}
		for _, u := range x.uids {
			if _, ok := tags[strings.TrimPrefix(x.url, strings.TrimSuffix(e.base, "/"))+u+x.suffix]; !ok {
				fail(fmt.Errorf("Radicale holds no %s%s in %s", u, x.suffix, x.url))
			}
		}
	}
}

// multistatus is the part of a WebDAV 207 answer the reference reads.
type multistatus struct {
	Responses []struct {
		Href     string `xml:"href"`
		Propstat []struct {
			Prop struct {
				ETag         string `xml:"getetag"`
				CalendarData string `xml:"calendar-data"`
				AddressData  string `xml:"address-data"`
				SyncToken    string `xml:"sync-token"`
				Principal    struct {
					Href string `xml:"href"`
				} `xml:"current-user-principal"`
				CalHome struct {
					Href string `xml:"href"`
				} `xml:"calendar-home-set"`
				BookHome struct {
					Href string `xml:"href"`
				} `xml:"addressbook-home-set"`
				ResourceType struct {
					Calendar    *struct{} `xml:"calendar"`
					AddressBook *struct{} `xml:"addressbook"`
				} `xml:"resourcetype"`
			} `xml:"prop"`
			Status string `xml:"status"`
		} `xml:"propstat"`
	} `xml:"response"`
	SyncToken string `xml:"sync-token"`
}

func (e *davEnv) multi(method, url, depth, body string) multistatus {
	b := e.do(method, url, depth, body, http.StatusMultiStatus)
	var ms multistatus
	if err := xml.Unmarshal(b, &ms); err != nil {
		fail(fmt.Errorf("reference: cannot read Radicale's answer to %s %s: %v", method, url, err))
	}
	return ms
}

// abs makes an href of Radicale's answer a URL.
func (e *davEnv) abs(href string) string {
	return strings.TrimSuffix(e.base, "/") + href
}

// davCollection is a collection the reference found.
type davCollection struct {
	url   string
	card  bool
	token string
}

// discover is what a client does before a sync, as postern's does it: the
// principal, its home sets, and the collections in them with their sync
// tokens.
func (e *davEnv) discover() []davCollection {
	ms := e.multi("PROPFIND", e.base, "0", `<D:propfind xmlns:D="DAV:"><D:prop><D:current-user-principal/></D:prop></D:propfind>`)
	principal := ""
	for _, r := range ms.Responses {
		for _, ps := range r.Propstat {
			if h := ps.Prop.Principal.Href; h != "" {
				principal = h
			}
		}
	}
	if principal == "" {
		fail(errors.New("reference: Radicale named no current-user-principal"))
	}
	ms = e.multi("PROPFIND", e.abs(principal), "0", `<D:propfind xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav" xmlns:CR="urn:ietf:params:xml:ns:carddav"><D:prop><C:calendar-home-set/><CR:addressbook-home-set/></D:prop></D:propfind>`)
	homes := map[string]bool{}
	for _, r := range ms.Responses {
		for _, ps := range r.Propstat {
			for _, h := range []string{ps.Prop.CalHome.Href, ps.Prop.BookHome.Href} {
				if h != "" {
					homes[h] = true
				}
			}
		}
	}
	var out []davCollection
	for h := range homes {
		ms = e.multi("PROPFIND", e.abs(h), "1", `<D:propfind xmlns:D="DAV:"><D:prop><D:resourcetype/><D:displayname/><D:sync-token/></D:prop></D:propfind>`)
		for _, r := range ms.Responses {
			for _, ps := range r.Propstat {
				rt := ps.Prop.ResourceType
				if rt.Calendar != nil || rt.AddressBook != nil {
					out = append(out, davCollection{url: e.abs(r.Href), card: rt.AddressBook != nil, token: ps.Prop.SyncToken})
				}
			}
		}
	}
	if len(out) != 2 {
		fail(fmt.Errorf("reference: discovery found %d collections, not the calendar and the address book", len(out)))
	}
	return out
}

// etags lists the hrefs and ETags of a collection (PROPFIND Depth 1).
func (e *davEnv) etags(col davCollection) map[string]string {
	ms := e.multi("PROPFIND", col.url, "1", `<D:propfind xmlns:D="DAV:"><D:prop><D:getetag/></D:prop></D:propfind>`)
	m := map[string]string{}
	for _, r := range ms.Responses {
		if e.abs(r.Href) == col.url {
			continue
		}
		for _, ps := range r.Propstat {
			if ps.Prop.ETag != "" {
				m[r.Href] = ps.Prop.ETag
			}
		}
	}
	return m
}

type refSync struct {
	took    time.Duration
	objects int
	tokens  map[string]string // collection URL to its sync token after the sync
}

// referenceFull is a first sync as a plain client makes it: discovery, the
// ETags of each collection, then every object in multigets of davBatch hrefs.
//
// With byToken it lists the members as postern does against a server that
// offers sync-collection: a sync-collection REPORT with no token.
func (e *davEnv) referenceFull(byToken bool) refSync {
	t0 := time.Now()
	rs := refSync{tokens: map[string]string{}}
	for _, col := range e.discover() {
		var hrefs []string
		if byToken {
			ms := e.multi("REPORT", col.url, "", `<D:sync-collection xmlns:D="DAV:"><D:sync-token></D:sync-token><D:sync-level>1</D:sync-level><D:prop><D:getetag/></D:prop></D:sync-collection>`)
			for _, r := range ms.Responses {
				if e.abs(r.Href) != col.url {
					hrefs = append(hrefs, r.Href)
				}
			}
			col.token = ms.SyncToken
		} else {
			for h := range e.etags(col) {
				hrefs = append(hrefs, h)
			}
		}
		sort.Strings(hrefs)
		for i := 0; i < len(hrefs); i += davBatch {
			var b strings.Builder
			if col.card {
				b.WriteString(`<CR:addressbook-multiget xmlns:D="DAV:" xmlns:CR="urn:ietf:params:xml:ns:carddav"><D:prop><D:getetag/><CR:address-data/></D:prop>`)
			} else {
				b.WriteString(`<C:calendar-multiget xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav"><D:prop><D:getetag/><C:calendar-data/></D:prop>`)
			}
			for _, h := range hrefs[i:min(i+davBatch, len(hrefs))] {
				b.WriteString("<D:href>" + h + "</D:href>")
			}
			if col.card {
				b.WriteString(`</CR:addressbook-multiget>`)
			} else {
				b.WriteString(`</C:calendar-multiget>`)
			}
			ms := e.multi("REPORT", col.url, "1", b.String())
			for _, r := range ms.Responses {
				for _, ps := range r.Propstat {
					if ps.Prop.CalendarData != "" || ps.Prop.AddressData != "" {
						rs.objects++
					}
				}
			}
		}
		rs.tokens[col.url] = col.token
	}
	rs.took = time.Since(t0)
	return rs
}

// referenceDiscover is a no-change sync as postern makes it against a server
// that gives each collection a sync token: discovery, and every token the
// same as the last sync's, so no REPORT.
func (e *davEnv) referenceDiscover(tokens map[string]string) time.Duration {
	t0 := time.Now()
	cols := e.discover()
	d := time.Since(t0)
	for _, col := range cols {
		if col.token == "" || col.token != tokens[col.url] {
			fail(fmt.Errorf("reference: the sync token of %s is %q, the last sync's %q, though nothing was written", col.url, col.token, tokens[col.url]))
		}
	}
	return d
}

// referenceEtags is a no-change sync by ETags: discovery and each
// collection's ETags, all the same as before, so nothing to fetch.
func (e *davEnv) referenceEtags() time.Duration {
	t0 := time.Now()
	n := 0
	for _, col := range e.discover() {
		n += len(e.etags(col))
	}
	d := time.Since(t0)
	if n != len(e.events)+len(e.contacts) {
		fail(fmt.Errorf("reference: Radicale lists %d objects, %d were written", n, len(e.events)+len(e.contacts)))
	}
	return d
}

// referenceToken is a no-change sync by sync token (RFC 6578), as postern
// makes it against a server that offers it: discovery, then sync-collection
// with the token of the last sync on each collection.
func (e *davEnv) referenceToken(tokens map[string]string) time.Duration {
	t0 := time.Now()
	changed := 0
	for _, col := range e.discover() {
		tok := tokens[col.url]
		if tok == "" {
			fail(fmt.Errorf("reference: Radicale gave %s no sync token", col.url))
		}
		ms := e.multi("REPORT", col.url, "0", `<D:sync-collection xmlns:D="DAV:"><D:sync-token>`+tok+`</D:sync-token><D:sync-level>1</D:sync-level><D:prop><D:getetag/></D:prop></D:sync-collection>`)
		changed += len(ms.Responses)
	}
	d := time.Since(t0)
	if changed != 0 {
		fail(fmt.Errorf("reference: sync-collection says %d objects changed, though nothing was written", changed))
	}
	return d
}

type refAgenda struct {
	took, http time.Duration
	objects    int
	expanded   bool     // Radicale expanded the recurring events itself
	keys       []string // the instances, "summary | start"
}

// referenceAgenda asks Radicale for the month's events (calendar-query with
// a time-range filter and expand) and expands what comes back.
func (e *davEnv) referenceAgenda() refAgenda {
	start, end := davFrom.Format("20060102T150405Z"), davTo.Format("20060102T150405Z")
	body := `<C:calendar-query xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav"><D:prop><D:getetag/><C:calendar-data><C:expand start="` + start + `" end="` + end + `"/></C:calendar-data></D:prop>` +
		`<C:filter><C:comp-filter name="VCALENDAR"><C:comp-filter name="VEVENT"><C:time-range start="` + start + `" end="` + end + `"/></C:comp-filter></C:comp-filter></C:filter></C:calendar-query>`
	t0 := time.Now()
	ms := e.multi("REPORT", e.calURL, "1", body)
	var ra refAgenda
	ra.http = time.Since(t0)
	ra.expanded = true
	for _, r := range ms.Responses {
		for _, ps := range r.Propstat {
			if ps.Prop.CalendarData == "" {
				continue
			}
			ra.objects++
			ins, recurring, err := expandObject(ps.Prop.CalendarData, davFrom, davTo)
			if err != nil {
				fail(fmt.Errorf("reference: %s: %v", r.Href, err))
			}
			if recurring {
				ra.expanded = false
			}
			ra.keys = append(ra.keys, ins...)
		}
	}
	ra.took = time.Since(t0)
	return ra
}

type refContacts struct {
	took  time.Duration
	names []string
}

// referenceContacts asks Radicale for the contacts whose FN or an EMAIL
// holds the fragment (addressbook-query, text-match contains).
func (e *davEnv) referenceContacts() refContacts {
	tm := `<CR:text-match collation="i;unicode-casemap" match-type="contains">` + davFragment + `</CR:text-match>`
	body := `<CR:addressbook-query xmlns:D="DAV:" xmlns:CR="urn:ietf:params:xml:ns:carddav"><D:prop><D:getetag/><CR:address-data/></D:prop>` +
		`<CR:filter test="anyof"><CR:prop-filter name="FN">` + tm + `</CR:prop-filter><CR:prop-filter name="EMAIL">` + tm + `</CR:prop-filter></CR:filter></CR:addressbook-query>`
	t0 := time.Now()
	ms := e.multi("REPORT", e.bookURL, "1", body)
	var rc refContacts
	for _, r := range ms.Responses {
		for _, ps := range r.Propstat {
			if d := ps.Prop.AddressData; d != "" {
				rc.names = append(rc.names, vcardFN(d))
			}
		}
	}
	rc.took = time.Since(t0)
	return rc
}

func vcardFN(d string) string {
	for _, l := range strings.Split(d, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimRight(l, "\r"), "FN:"); ok {
			return v
		}
	}
	return ""
}

// agendaRows reads an agenda answer into instance keys like the reference's.
func agendaRows(line []byte) []string {
	var a struct {
		Result struct {
			StructuredContent struct {
				Events []struct {
					Summary string `json:"summary"`
					Start   string `json:"start"`
					AllDay  bool   `json:"all_day"`
				} `json:"events"`
				Truncated bool     `json:"truncated"`
				Problems  []string `json:"problems"`
			} `json:"structuredContent"`
		} `json:"result"`
	}
	if err := json.Unmarshal(line, &a); err != nil {
		fail(fmt.Errorf("cannot read postern's agenda answer: %v: %.300s", err, line))
	}
	sc := a.Result.StructuredContent
	if sc.Truncated {
		fail(fmt.Errorf("postern's agenda answer is truncated (%d events): use a shorter range or fewer events", len(sc.Events)))
	}
	if len(sc.Problems) > 0 {
		logf("postern's agenda names problems: %s", strings.Join(sc.Problems, "; "))
	}
	keys := make([]string, 0, len(sc.Events))
	for _, ev := range sc.Events {
		// The person's zone is UTC: "2026-03-04 09:30 UTC", or a date when all day.
		keys = append(keys, ev.Summary+" | "+strings.TrimSuffix(ev.Start, " UTC"))
	}
	return keys
}

// contactRows reads a contacts_search answer into names.
func contactRows(line []byte) []string {
	var a struct {
		Result struct {
			StructuredContent struct {
				Contacts []struct {
					Name string `json:"name"`
				} `json:"contacts"`
				Truncated bool `json:"truncated"`
			} `json:"structuredContent"`
		} `json:"result"`
	}
	if err := json.Unmarshal(line, &a); err != nil {
		fail(fmt.Errorf("cannot read postern's %s answer: %v: %.300s", generated.ToolContactsSearch, err, line))
	}
	if a.Result.StructuredContent.Truncated {
		fail(fmt.Errorf("postern's %s answer is truncated at 200: pick a rarer fragment", generated.ToolContactsSearch))
	}
	var names []string
	for _, c := range a.Result.StructuredContent.Contacts {
		names = append(names, c.Name)
	}
	return names
}

// checkAgenda checks that every row postern gives lies in the month.
func (e *davEnv) checkAgenda(keys []string) {
	lo, hi := davFrom.Format("2006-01-02"), davTo.Format("2006-01-02 15:04")
	for _, k := range keys {
		_, start, _ := strings.Cut(k, " | ")
		if start > hi || (len(start) == 10 && start < davFrom.AddDate(0, 0, -3).Format("2006-01-02")) || (len(start) > 10 && start < davFrom.AddDate(0, 0, -1).Format("2006-01-02")) {
			fail(fmt.Errorf("postern's agenda from %s gives an instance starting %s, outside the month", lo, start))
		}
	}
	if len(keys) == 0 {
		fail(errors.New("postern's agenda for the month is empty"))
	}
}

// diffKeys lists what one multiset has and the other not, at most 20 lines.
func diffKeys(an string, a []string, bn string, b []string) []string {
	count := map[string]int{}
	for _, k := range a {
		count[k]++
	}
	for _, k := range b {
		count[k]--
	}
	var out []string
	for k, n := range count {
		switch {
		case n > 0:
			out = append(out, fmt.Sprintf("only %s (%d): %s", an, n, k))
		case n < 0:
			out = append(out, fmt.Sprintf("only %s (%d): %s", bn, -n, k))
		}
	}
	sort.Strings(out)
	if len(out) > 20 {
		out = append(out[:20], fmt.Sprintf("… %d more", len(out)-20))
	}
	return out
}

// The generated data.

type davEvent struct {
	uid, data string // data: the object as one PUT stores it
	comps     string // its VEVENTs (the series and a moved instance)
	zone      string // the TZID it uses, if any
	kind      string // "utc", "zoned", "floating", "allday", "recurring"
	exdate    bool
	override  bool
}

type davContact struct {
	uid, data string
	fn        string
	emails    []string
}

const davCalHeader = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//postern//bench//EN\r\n"

var (
	davZones = []string{"Europe/Paris", "America/New_York", "Europe/London", "Asia/Tokyo"}
	// Standard VTIMEZONE definitions, as calendar clients write them.
	davVTimezones = map[string]string{
		"Europe/Paris": "BEGIN:VTIMEZONE\r\nTZID:Europe/Paris\r\nBEGIN:DAYLIGHT\r\nTZOFFSETFROM:+0100\r\nTZOFFSETTO:+0200\r\nTZNAME:CEST\r\nDTSTART:19810329T020000\r\nRRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=-1SU\r\nEND:DAYLIGHT\r\n" +
			"BEGIN:STANDARD\r\nTZOFFSETFROM:+0200\r\nTZOFFSETTO:+0100\r\nTZNAME:CET\r\nDTSTART:19961027T030000\r\nRRULE:FREQ=YEARLY;BYMONTH=10;BYDAY=-1SU\r\nEND:STANDARD\r\nEND:VTIMEZONE\r\n",
		"America/New_York": "BEGIN:VTIMEZONE\r\nTZID:America/New_York\r\nBEGIN:DAYLIGHT\r\nTZOFFSETFROM:-0500\r\nTZOFFSETTO:-0400\r\nTZNAME:EDT\r\nDTSTART:20070311T020000\r\nRRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=2SU\r\nEND:DAYLIGHT\r\n" +
			"BEGIN:STANDARD\r\nTZOFFSETFROM:-0400\r\nTZOFFSETTO:-0500\r\nTZNAME:EST\r\nDTSTART:20071104T020000\r\nRRULE:FREQ=YEARLY;BYMONTH=11;BYDAY=1SU\r\nEND:STANDARD\r\nEND:VTIMEZONE\r\n",
		"Europe/London": "BEGIN:VTIMEZONE\r\nTZID:Europe/London\r\nBEGIN:DAYLIGHT\r\nTZOFFSETFROM:+0000\r\nTZOFFSETTO:+0100\r\nTZNAME:BST\r\nDTSTART:19810329T010000\r\nRRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=-1SU\r\nEND:DAYLIGHT\r\n" +
			"BEGIN:STANDARD\r\nTZOFFSETFROM:+0100\r\nTZOFFSETTO:+0000\r\nTZNAME:GMT\r\nDTSTART:19961027T020000\r\nRRULE:FREQ=YEARLY;BYMONTH=10;BYDAY=-1SU\r\nEND:STANDARD\r\nEND:VTIMEZONE\r\n",
		"Asia/Tokyo": "BEGIN:VTIMEZONE\r\nTZID:Asia/Tokyo\r\nBEGIN:STANDARD\r\nTZOFFSETFROM:+0900\r\nTZOFFSETTO:+0900\r\nTZNAME:JST\r\nDTSTART:19700101T000000\r\nEND:STANDARD\r\nEND:VTIMEZONE\r\n",
	}
	davTitles  = []string{"Design review", "1:1", "Standup", "Budget planning", "Customer call", "Dentist", "Lunch with Sam", "Quarterly review", "Interview", "Team offsite", "Flight", "Yoga", "Release sync", "Board meeting", "School pickup", "Workshop", "Coffee", "Demo", "Retro", "Training"}
	davPlaces  = []string{"", "", "Room 4.12", "Zoom", "Café Central", "https://meet.example.com/abc-defg", "HQ, 2nd floor", "Home"}
	davFirst   = []string{"Priya", "Sam", "Lena", "Marco", "Aiko", "Jonas", "Fatima", "Chen", "Olga", "Diego", "Amara", "Noah", "Ines", "Ravi", "Sofia", "Tomasz", "Yara", "Hugo", "Mei", "Kwame", "Elif", "Lucas", "Nadia", "Pedro", "Zoe", "Arjun", "Clara", "Emeka", "Hanna", "Ivan"}
	davLast    = []string{"Sharma", "Rivera", "Novak", "Rossi", "Tanaka", "Berg", "Haddad", "Wang", "Petrova", "Garcia", "Okafor", "Smith", "Moreau", "Patel", "Costa", "Kowalski", "Nasser", "Lefevre", "Lin", "Mensah", "Yilmaz", "Silva", "Ivanova", "Santos", "Weber", "Gupta", "Dubois", "Adeyemi", "Lind", "Popov"}
	davOrgs    = []string{"Northwind Traders", "Contoso", "Fabrikam", "Globex", "Initech", "Umbrella Health", "Acme Corp", "Hooli", "Vandelay Industries", "Stark Labs", ""}
	davDomains = []string{"example.com", "example.org", "mail.example.net", "contoso.example", "fabrikam.example"}
)

// genEvents makes n events over two years: about 10% weekly recurring (some
// with a cancelled instance, some with a moved one), 8% all-day, 2%
// floating, the rest at a UTC time or in one of four zones with TZID.
func genEvents(rng *mrand.Rand, n int) []davEvent {
	evs := make([]davEvent, 0, n)
	stamp := "DTSTAMP:20250601T000000Z\r\n"
	for i := 0; i < n; i++ {
		ev := davEvent{uid: fmt.Sprintf("bench-event-%05d", i)}
		day := davSpanStart.AddDate(0, 0, rng.Intn(davSpanDays))
		hour, minute := 7+rng.Intn(12), 15*rng.Intn(4)
		length := time.Duration([]int{30, 45, 60, 60, 90, 120, 180}[rng.Intn(7)]) * time.Minute
		title := davTitles[rng.Intn(len(davTitles))]
		var comp strings.Builder
		comp.WriteString("BEGIN:VEVENT\r\nUID:" + ev.uid + "\r\n" + stamp + "SUMMARY:" + title + "\r\n")
		if p := davPlaces[rng.Intn(len(davPlaces))]; p != "" {
			comp.WriteString("LOCATION:" + icalEscape(p) + "\r\n")
		}
		if rng.Intn(3) == 0 {
			comp.WriteString("DESCRIPTION:Agenda: " + title + " notes\\, links and action items.\r\n")
		}
		if rng.Intn(4) == 0 {
			comp.WriteString("ORGANIZER;CN=Sam Rivera:mailto:sam@example.com\r\n")
			for j := 0; j < 1+rng.Intn(4); j++ {
				f := davFirst[rng.Intn(len(davFirst))]
				comp.WriteString(fmt.Sprintf("ATTENDEE;CN=%s;PARTSTAT=ACCEPTED;ROLE=REQ-PARTICIPANT:mailto:%s@example.org\r\n", f, strings.ToLower(f)))
			}
		}
		x := rng.Intn(100)
		switch {
		case x < 10: // weekly recurring, in a zone
			ev.kind = "recurring"
			zone := davZones[rng.Intn(len(davZones))]
			loc := mustZone(zone)
			st := time.Date(day.Year(), day.Month(), day.Day(), hour, minute, 0, 0, loc)
			interval := 1
			if rng.Intn(5) == 0 {
				interval = 2
			}
			count := 4 + rng.Intn(37)
			occ := func(k int) time.Time { return st.AddDate(0, 0, 7*interval*k) }
			rule := fmt.Sprintf("FREQ=WEEKLY;COUNT=%d", count)
			if rng.Intn(2) == 0 {
				// The same instances, bounded by UNTIL (UTC, as RFC 5545 asks with a TZID).
				rule = "FREQ=WEEKLY;UNTIL=" + occ(count-1).Add(time.Hour).UTC().Format("20060102T150405Z")
			}
			if interval > 1 {
				rule += fmt.Sprintf(";INTERVAL=%d", interval)
			}
			ev.zone = zone
			comp.WriteString("DTSTART;TZID=" + zone + ":" + st.Format("20060102T150405") + "\r\n")
			comp.WriteString("DTEND;TZID=" + zone + ":" + st.Add(length).Format("20060102T150405") + "\r\n")
			comp.WriteString("RRULE:" + rule + "\r\n")
			ex, moved := -1, -1
			if rng.Intn(3) == 0 {
				ev.exdate = true
				ex = 1 + rng.Intn(count-1)
				comp.WriteString("EXDATE;TZID=" + zone + ":" + occ(ex).Format("20060102T150405") + "\r\n")
			}
			var over string
			if rng.Intn(5) == 0 {
				if moved = 1 + rng.Intn(count-1); moved != ex {
					ev.override = true
					orig := occ(moved)
					ns := orig.Add(time.Duration(1+rng.Intn(26)) * time.Hour)
					over = "BEGIN:VEVENT\r\nUID:" + ev.uid + "\r\n" + stamp + "SUMMARY:" + title + "\r\n" +
						"RECURRENCE-ID;TZID=" + zone + ":" + orig.Format("20060102T150405") + "\r\n" +
						"DTSTART;TZID=" + zone + ":" + ns.In(loc).Format("20060102T150405") + "\r\n" +
						"DTEND;TZID=" + zone + ":" + ns.Add(length).In(loc).Format("20060102T150405") + "\r\n" +
						"END:VEVENT\r\n"
				}
			}
			comp.WriteString("END:VEVENT\r\n")
			ev.comps = comp.String() + over
		case x < 18: // all day, one to three days
			ev.kind = "allday"
			comp.WriteString("DTSTART;VALUE=DATE:" + day.Format("20060102") + "\r\n")
			comp.WriteString("DTEND;VALUE=DATE:" + day.AddDate(0, 0, 1+rng.Intn(3)).Format("20060102") + "\r\n")
			comp.WriteString("TRANSP:TRANSPARENT\r\nEND:VEVENT\r\n")
			ev.comps = comp.String()
		case x < 20: // floating
			ev.kind = "floating"
			st := time.Date(day.Year(), day.Month(), day.Day(), hour, minute, 0, 0, time.UTC)
			comp.WriteString("DTSTART:" + st.Format("20060102T150405") + "\r\nDTEND:" + st.Add(length).Format("20060102T150405") + "\r\nEND:VEVENT\r\n")
			ev.comps = comp.String()
		case x < 55: // UTC
			ev.kind = "utc"
			st := time.Date(day.Year(), day.Month(), day.Day(), hour, minute, 0, 0, time.UTC)
			comp.WriteString("DTSTART:" + st.Format("20060102T150405Z") + "\r\nDTEND:" + st.Add(length).Format("20060102T150405Z") + "\r\nEND:VEVENT\r\n")
			ev.comps = comp.String()
		default: // in a zone
			ev.kind = "zoned"
			zone := davZones[rng.Intn(len(davZones))]
			st := time.Date(day.Year(), day.Month(), day.Day(), hour, minute, 0, 0, mustZone(zone))
			ev.zone = zone
			comp.WriteString("DTSTART;TZID=" + zone + ":" + st.Format("20060102T150405") + "\r\nDTEND;TZID=" + zone + ":" + st.Add(length).Format("20060102T150405") + "\r\nEND:VEVENT\r\n")
			ev.comps = comp.String()
		}
		ev.data = davCalHeader + davVTimezones[ev.zone] + ev.comps + "END:VCALENDAR\r\n"
		evs = append(evs, ev)
	}
	return evs
}

func icalEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, ",", `\,`, ";", `\;`).Replace(s)
}

// genContacts makes n vCards: a name, one to three addresses, a phone or
// two, an organisation; one in twenty has only a first name as FN, its
// surname only in its addresses.
func genContacts(rng *mrand.Rand, n int) []davContact {
	cs := make([]davContact, 0, n)
	for i := 0; i < n; i++ {
		f, l := davFirst[rng.Intn(len(davFirst))], davLast[rng.Intn(len(davLast))]
		c := davContact{uid: fmt.Sprintf("bench-contact-%05d", i), fn: f + " " + l}
		if rng.Intn(20) == 0 {
			c.fn = f
		}
		for j := 0; j < 1+rng.Intn(3); j++ {
			local := []string{strings.ToLower(f + "." + l), strings.ToLower(f[:1] + l), strings.ToLower(f)}[j]
			c.emails = append(c.emails, fmt.Sprintf("%s%d@%s", local, i, davDomains[rng.Intn(len(davDomains))]))
		}
		var b strings.Builder
		b.WriteString("BEGIN:VCARD\r\nVERSION:3.0\r\nUID:" + c.uid + "\r\nFN:" + c.fn + "\r\nN:" + l + ";" + f + ";;;\r\n")
		for j, m := range c.emails {
			b.WriteString("EMAIL;TYPE=INTERNET," + []string{"WORK", "HOME", "OTHER"}[j] + ":" + m + "\r\n")
		}
		b.WriteString(fmt.Sprintf("TEL;TYPE=CELL:+44 7700 %06d\r\n", rng.Intn(1000000)))
		if rng.Intn(2) == 0 {
			b.WriteString(fmt.Sprintf("TEL;TYPE=WORK:+1 555 01%02d %04d\r\n", rng.Intn(100), rng.Intn(10000)))
		}
		if o := davOrgs[rng.Intn(len(davOrgs))]; o != "" {
			b.WriteString("ORG:" + o + "\r\n")
		}
		b.WriteString("END:VCARD\r\n")
		c.data = b.String()
		cs = append(cs, c)
	}
	return cs
}

func mustZone(name string) *time.Location {
	loc, err := time.LoadLocation(name)
	if err != nil {
		fail(fmt.Errorf("the time zone %s is not on this machine (install tzdata): %v", name, err))
	}
	return loc
}

func (e *davEnv) countData(r *davReport) {
	d := &r.Data
	d.Events, d.Contacts = len(e.events), len(e.contacts)
	var cal, book int
	for _, ev := range e.events {
		cal += len(ev.data)
		switch ev.kind {
		case "recurring":
			d.Recurring++
			d.Zoned++
		case "allday":
			d.AllDay++
		case "floating":
			d.Floating++
		case "utc":
			d.UTC++
		case "zoned":
			d.Zoned++
		}
		if ev.exdate {
			d.WithExdate++
		}
		if ev.override {
			d.WithOverride++
		}
	}
	for _, c := range e.contacts {
		book += len(c.data)
	}
	d.CalendarKiB, d.BookKiB = round(float64(cal)/1024), round(float64(book)/1024)
}

// expectedInstances expands every generated event over the month, the
// reference's way: what Radicale should have returned, expanded.
func expectedInstances(evs []davEvent) []string {
	var out []string
	for _, ev := range evs {
		ins, _, err := expandObject(ev.data, davFrom, davTo)
		if err != nil {
			fail(fmt.Errorf("generated %s: %v", ev.uid, err))
		}
		out = append(out, ins...)
	}
	return out
}

func expectedContacts(cs []davContact) []string {
	var out []string
	for _, c := range cs {
		hit := strings.Contains(strings.ToLower(c.fn), davFragment)
		for _, m := range c.emails {
			hit = hit || strings.Contains(strings.ToLower(m), davFragment)
		}
		if hit {
			out = append(out, c.fn)
		}
	}
	return out
}

// The reference's expansion: a small iCalendar reader for the VEVENTs (it
// unfolds lines and reads DTSTART, DTEND, RRULE, EXDATE, RECURRENCE-ID and
// SUMMARY), and rrule-go for the recurrences. Floating times and dates are
// read in UTC, as Radicale reads them without a calendar-timezone.

type icalTime struct {
	t      time.Time
	allDay bool
}

type vevent struct {
	summary    string
	start, end icalTime
	hasEnd     bool
	rrule      string
	exdates    []time.Time
	recurID    *icalTime
}

// expandObject returns the instances of one iCalendar object overlapping
// [from, to), each as "summary | start" with the start in UTC
// ("2006-01-02 15:04", or "2006-01-02" for a date), and whether it held an
// unexpanded recurrence.
func expandObject(data string, from, to time.Time) ([]string, bool, error) {
	evs, err := readVEvents(data)
	if err != nil {
		return nil, false, err
	}
	var master *vevent
	overrides := map[time.Time]*vevent{}
	var out []string
	for i := range evs {
		v := &evs[i]
		if v.recurID != nil {
			overrides[v.recurID.t] = v
		} else if master == nil && v.rrule != "" {
			master = v
		} else {
			out = append(out, v.keysIn(v.start.t, from, to)...)
		}
	}
	if master == nil {
		// Instances the server expanded, or overrides alone.
		for _, v := range overrides {
			out = append(out, v.keysIn(v.start.t, from, to)...)
		}
		return out, false, nil
	}
	opt, err := rrule.StrToROption(master.rrule)
	if err != nil {
		return nil, true, fmt.Errorf("RRULE %s: %v", master.rrule, err)
	}
	opt.Dtstart = master.start.t
	rr, err := rrule.NewRRule(*opt)
	if err != nil {
		return nil, true, fmt.Errorf("RRULE %s: %v", master.rrule, err)
	}
	length := master.length()
	ex := map[time.Time]bool{}
	for _, t := range master.exdates {
		ex[t.UTC()] = true
	}
	for _, t := range rr.Between(from.Add(-length-24*time.Hour), to, true) {
		if ex[t.UTC()] {
			continue
		}
		if _, moved := overrides[t.UTC()]; moved {
			continue
		}
		out = append(out, master.keysIn(t, from, to)...)
	}
	for _, v := range overrides {
		out = append(out, v.keysIn(v.start.t, from, to)...)
	}
	return out, true, nil
}

func (v *vevent) length() time.Duration {
	switch {
	case v.hasEnd:
		return v.end.t.Sub(v.start.t)
	case v.start.allDay:
		return 24 * time.Hour
	}
	return 0
}

// keysIn is the key of the instance of v starting at st, when it overlaps [from, to).
func (v *vevent) keysIn(st time.Time, from, to time.Time) []string {
	end := st.Add(v.length())
	overlaps := st.Before(to) && end.After(from)
	if v.length() == 0 {
		overlaps = !st.Before(from) && st.Before(to)
	}
	if !overlaps {
		return nil
	}
	if v.start.allDay {
		return []string{v.summary + " | " + st.UTC().Format("2006-01-02")}
	}
	return []string{v.summary + " | " + st.UTC().Format("2006-01-02 15:04")}
}

// readVEvents reads the VEVENTs of an iCalendar object.
func readVEvents(data string) ([]vevent, error) {
	data = strings.ReplaceAll(data, "\r\n", "\n")
	data = strings.ReplaceAll(data, "\n ", "")
	data = strings.ReplaceAll(data, "\n\t", "")
	var out []vevent
	var cur *vevent
	depth := 0 // components inside the VEVENT (VALARM)
	for _, l := range strings.Split(data, "\n") {
		name, value, ok := strings.Cut(l, ":")
		if !ok {
			continue
		}
		key, params, _ := strings.Cut(name, ";")
		key = strings.ToUpper(key)
		switch {
		case key == "BEGIN" && value == "VEVENT":
			out = append(out, vevent{})
			cur = &out[len(out)-1]
			continue
		case key == "END" && value == "VEVENT":
			cur = nil
			continue
		case cur == nil:
			continue
		case key == "BEGIN":
			depth++
			continue
		case key == "END":
			depth--
			continue
		case depth > 0:
			continue
		}
		var err error
		switch key {
		case "SUMMARY":
			cur.summary = strings.NewReplacer(`\,`, ",", `\;`, ";", `\\`, `\`, `\n`, "\n").Replace(value)
		case "DTSTART":
			cur.start, err = parseICalTime(params, value)
		case "DTEND":
			cur.end, err = parseICalTime(params, value)
			cur.hasEnd = true
		case "RRULE":
			cur.rrule = value
		case "EXDATE":
			for _, x := range strings.Split(value, ",") {
				var t icalTime
				if t, err = parseICalTime(params, x); err != nil {
					break
				}
				cur.exdates = append(cur.exdates, t.t)
			}
		case "RECURRENCE-ID":
			var t icalTime
			t, err = parseICalTime(params, value)
			t.t = t.t.UTC()
			cur.recurID = &t
		case "DURATION":
			err = fmt.Errorf("DURATION is not read by the bench's reference")
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %v", l, err)
		}
	}
	return out, nil
}

func parseICalTime(params, value string) (icalTime, error) {
	loc := time.UTC
	allDay := false
	for _, p := range strings.Split(params, ";") {
		k, v, _ := strings.Cut(p, "=")
		switch strings.ToUpper(k) {
		case "TZID":
			l, err := time.LoadLocation(strings.Trim(v, `"`))
			if err != nil {
				return icalTime{}, err
			}
			loc = l
		case "VALUE":
			allDay = strings.EqualFold(v, "DATE")
		}
	}
	if allDay || len(value) == 8 {
		t, err := time.ParseInLocation("20060102", value, time.UTC)
		return icalTime{t: t, allDay: true}, err
	}
	if strings.HasSuffix(value, "Z") {
		t, err := time.Parse("20060102T150405Z", value)
		return icalTime{t: t}, err
	}
	t, err := time.ParseInLocation("20060102T150405", value, loc)
	return icalTime{t: t}, err
}

func (r *davReport) print(w io.Writer) {
	m := r.Machine
	fmt.Fprintf(w, "machine: %d CPUs, %s, %s, %s/%s, load %s (after: %s)\n", m.CPUs, m.CPUModel, m.GoVersion, m.OS, m.Arch, r.Load, r.LoadAfter)
	d := r.Data
	fmt.Fprintf(w, "server: %s on 127.0.0.1; calendar of %d events (%.0f KiB: %d weekly recurring, %d of them with a cancelled and %d with a moved instance; %d all-day; %d floating; %d with TZID; %d UTC), address book of %d contacts (%.0f KiB); seed %d; filled in %.1f s (untimed)\n",
		r.Radicale, d.Events, d.CalendarKiB, d.Recurring, d.WithExdate, d.WithOverride, d.AllDay, d.Floating, d.Zoned, d.UTC, d.Contacts, d.BookKiB, r.Seed, d.FillSecs)
	fmt.Fprintf(w, "  %-78s %10s %10s\n", "", "median", "min")
	row := func(name string, s summary) {
		fmt.Fprintf(w, "  %-78s %10s %10s\n", name, ms(s.Median), ms(s.Min))
	}
	s := r.Sync
	fmt.Fprintf(w, "sync, %d timed rounds after one uncounted [first: %s] [then: %s]:\n", r.SyncReps, s.Summary, s.NoChangeLine)
	row("reference full: discovery, PROPFIND getetag, multigets of 200", s.RefFull)
	row("reference full: discovery, sync-collection (no token), multigets of 200", s.RefFullToken)
	row("postern sync, empty store (process wall)", s.First)
	row("  the same, postern's --stats time", s.FirstStats)
	row("reference no change: discovery alone (sync tokens as before)", s.RefDiscover)
	row("reference no change: discovery, PROPFIND getetag on each collection", s.RefEtags)
	row("reference no change: discovery, sync-collection with the last token", s.RefToken)
	row("postern sync, nothing changed (process wall)", s.NoChange)
	a := r.Agenda
	fmt.Fprintf(w, "reads, %d timed rounds after one uncounted:\n", r.Reps)
	expand := "Radicale ignored expand; the client expanded"
	if a.ServerExpanded {
		expand = "Radicale expanded"
	}
	row("reference calendar-query, time-range "+davFrom.Format("2006-01")+", "+expand, a.Reference)
	row("  the REPORT alone (answer read and parsed)", a.ReferenceHTTP)
	row(generated.ToolAgenda+" "+a.Args, a.Postern)
	c := r.Contacts
	row("reference addressbook-query, FN or EMAIL contains \""+davFragment+"\"", c.Reference)
	row(generated.ToolContactsSearch+" "+c.Args, c.Postern)
	x := r.Ratios
	fmt.Fprintf(w, "ratios of medians, postern / reference: first sync %.2fx (vs PROPFIND), %.2fx (vs sync-collection); no-change sync %.2fx (vs discovery alone), %.2fx (vs sync-collection), %.2fx (vs PROPFIND getetag); %s %.2fx (%.2fx vs the REPORT alone); %s %.2fx\n",
		x.FirstSync, x.FirstSyncToken, x.NoChangeDisc, x.NoChangeSync, x.NoChangeEtags, generated.ToolAgenda, x.Agenda, x.AgendaHTTP, generated.ToolContactsSearch, x.ContactsSearch)
	fmt.Fprintf(w, "agenda instances in the month: postern %d, reference %d (from %d objects Radicale returned), expected from the generated data %d; postern's answer %.0f KiB\n",
		a.PosternCount, a.ReferenceCount, a.Objects, a.ExpectedCount, float64(a.AnswerBytes)/1024)
	for _, l := range a.Mismatch {
		fmt.Fprintln(w, "  agenda "+l)
	}
	fmt.Fprintf(w, "contacts found: postern %d, reference %d, expected %d\n", c.PosternCount, c.ReferenceCount, c.ExpectedCount)
	for _, l := range c.Mismatch {
		fmt.Fprintln(w, "  contacts "+l)
	}
	if len(a.Mismatch) == 0 && len(c.Mismatch) == 0 {
		fmt.Fprintln(w, "postern and the reference found the same instances (summary and start) and the same contacts")
	}
}
