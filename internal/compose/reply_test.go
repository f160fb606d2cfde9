package compose

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

var (
	me     = Address{"Me Myself", "me@home.example"}
	meAlt  = Address{"", "me.alt@work.example"}
	alice  = Address{"Alice", "alice@a.example"}
	bob    = Address{"Bob", "bob@b.example"}
	carol  = Address{"Carol", "carol@c.example"}
	list   = Address{"The List", "list@lists.example"}
	when   = time.Date(2025, 3, 14, 9, 26, 53, 0, time.FixedZone("", 3600))
	sample = Original{
		MessageID:  "m3@a.example",
		References: []string{"m1@a.example", "m2@b.example"},
		InReplyTo:  "m2@b.example",
		From:       []Address{alice},
		To:         []Address{{"ME", "ME@HOME.EXAMPLE"}, bob},
		Cc:         []Address{carol, {"", "Me.Alt@Work.Example"}, {"Bobby", "BOB@b.example"}},
		Subject:    "Lunch",
		Date:       when,
		Text:       "Shall we?\n\n> earlier words\n",
	}
)

func addrs(list []Address) []string {
	out := []string{}
	for _, a := range list {
		out = append(out, a.Addr)
	}
	return out
}

func TestReplyRecipients(t *testing.T) {
	own := []Address{me, meAlt}
	withReplyTo := sample
	withReplyTo.ReplyTo = []Address{list}
	mine := sample
	mine.From = []Address{{"Me", "Me@Home.Example"}}
	noteToSelf := mine
	noteToSelf.To, noteToSelf.Cc = []Address{me}, nil

	for _, tc := range []struct {
		name             string
		orig             Original
		all              bool
		extraTo, extraCc []Address
		to, cc           []string
		err              string
	}{
		{name: "reply goes to From", orig: sample, to: []string{"alice@a.example"}},
		{name: "reply goes to Reply-To", orig: withReplyTo, to: []string{"list@lists.example"}},
		{name: "reply-all: sender and To in To, Cc in Cc, never own, each once", orig: sample, all: true,
			to: []string{"alice@a.example", "bob@b.example"}, cc: []string{"carol@c.example"}},
		{name: "reply-all with Reply-To", orig: withReplyTo, all: true,
			to: []string{"list@lists.example", "bob@b.example"}, cc: []string{"carol@c.example"}},
		{name: "reply to own sent message goes to its To", orig: mine, to: []string{"bob@b.example"}},
		{name: "reply-all to own sent message", orig: mine, all: true,
			to: []string{"bob@b.example"}, cc: []string{"carol@c.example"}},
		{name: "extras added and deduped", orig: sample, extraTo: []Address{{"", "ALICE@a.example"}, carol}, extraCc: []Address{bob, carol},
			to: []string{"alice@a.example", "carol@c.example"}, cc: []string{"bob@b.example"}},
		{name: "note to self has nobody to reply to", orig: noteToSelf, err: "to: is empty"},
		{name: "note to self with an explicit recipient", orig: noteToSelf, extraTo: []Address{bob}, to: []string{"bob@b.example"}},
		{name: "extra address must be checked", orig: sample, extraCc: []Address{{"", "eve@evil.example>, <x@y.example"}}, err: "cc[0]:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Reply(tc.orig, own, tc.all, "OK", tc.extraTo, tc.extraCc)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("Reply error = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.cc == nil {
				tc.cc = []string{}
			}
			if got := addrs(m.To); !reflect.DeepEqual(got, tc.to) {
				t.Errorf("To = %v, want %v", got, tc.to)
			}
			if got := addrs(m.Cc); !reflect.DeepEqual(got, tc.cc) {
				t.Errorf("Cc = %v, want %v", got, tc.cc)
			}
			if m.From != me {
				t.Errorf("From = %+v, want %+v", m.From, me)
			}
			if len(m.Bcc) != 0 {
				t.Errorf("Bcc = %v, want none", m.Bcc)
			}
		})
	}
}

func TestReplySubject(t *testing.T) {
	for in, want := range map[string]string{
		"Lunch":                       "Re: Lunch",
		"Re: RE: Re[3]: x":            "Re: x",
		"re: Re(2): RE : Aw: SV: x":   "Re: x",
		"Antw: Rif: Odp: 回复：x":        "Re: x",
		"Fwd: x":                      "Re: Fwd: x",
		"Re: Fwd: Re: x":              "Re: Fwd: Re: x",
		"Rerun: the job":              "Re: Rerun: the job",
		"Re[x]: odd":                  "Re: Re[x]: odd",
		"":                            "Re:",
		"Re:":                         "Re:",
		"  Re:   spaced  ":            "Re: spaced",
		"Hi\r\nBcc: eve@evil.example": "Re: Hi Bcc: eve@evil.example",
		"=?utf-8?q?a=0D=0A?=":         "Re: = ?utf-8?q?a=0D=0A?=",
		strings.Repeat("é", 600):      "Re: " + strings.Repeat("é", 497),
	} {
		orig := sample
		orig.Subject = in
		m, err := Reply(orig, []Address{me}, false, "ok", nil, nil)
		if err != nil {
			t.Errorf("Reply to subject %q: %v", in, err)
			continue
		}
		if m.Subject != want {
			t.Errorf("Reply to subject %q: subject %q, want %q", in, m.Subject, want)
		}
	}
}

func TestReplyThread(t *testing.T) {
	var long []string
	for i := range 30 {
		long = append(long, fmt.Sprintf("m%d@a.example", i))
	}
	for _, tc := range []struct {
		name      string
		orig      Original
		inReplyTo string
		refs      []string
	}{
		{"references then id", sample, "m3@a.example", []string{"m1@a.example", "m2@b.example", "m3@a.example"}},
		{"in-reply-to when no references",
			Original{MessageID: "<m3@a.example>", InReplyTo: "<m2@b.example>", From: []Address{alice}},
			"m3@a.example", []string{"m2@b.example", "m3@a.example"}},
		{"first message of a thread", Original{MessageID: "m1@a.example", From: []Address{alice}},
			"m1@a.example", []string{"m1@a.example"}},
		{"no id at all", Original{From: []Address{alice}}, "", nil},
		{"duplicates dropped", Original{MessageID: "m2@a.example", References: []string{"m1@a.example", "m2@a.example", "m1@a.example"}, From: []Address{alice}},
			"m2@a.example", []string{"m1@a.example", "m2@a.example"}},
		{"capped at 20, first kept", Original{MessageID: "last@a.example", References: long, From: []Address{alice}},
			"last@a.example", append(append([]string{"m0@a.example"}, long[12:]...), "last@a.example")},
		{"unsafe ids left out",
			Original{MessageID: "x@y>\r\nBcc: eve@evil.example", References: []string{"m1@a.example", "a b@c", "noat", "m2@a.example"}, From: []Address{alice}},
			"", []string{"m1@a.example", "m2@a.example"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Reply(tc.orig, []Address{me}, false, "ok", nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if m.InReplyTo != tc.inReplyTo || !reflect.DeepEqual(m.References, tc.refs) {
				t.Errorf("In-Reply-To %q, References %v; want %q, %v", m.InReplyTo, m.References, tc.inReplyTo, tc.refs)
			}
			if len(m.References) > 20 {
				t.Errorf("%d references, want at most 20", len(m.References))
			}
		})
	}
}

func TestReplyBody(t *testing.T) {
	m, err := Reply(sample, []Address{me}, false, "Yes, noon.\n\n", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := "Yes, noon.\n\nOn Fri, 14 Mar 2025 09:26 +0100, Alice wrote:\n> Shall we?\n>\n>> earlier words\n"
	if m.Body != want {
		t.Errorf("Body = %q, want %q", m.Body, want)
	}
	if p := m.Preview(); !reflect.DeepEqual(p.BodyLines, []string{"Yes, noon."}) {
		t.Errorf("Preview lines = %q, want only the agent's text", p.BodyLines)
	}

	// A long original is cut at 200 quoted lines; controls in it are dropped; the attribution
	// falls back to the address when the name is empty.
	var lines []string
	for i := range 250 {
		lines = append(lines, fmt.Sprintf("line %d \x00", i))
	}
	orig := Original{From: []Address{{"", "alice@a.example"}}, Text: strings.Join(lines, "\r\n")}
	m, err = Reply(orig, []Address{me}, false, "", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Split(strings.TrimSuffix(m.Body, "\n"), "\n")
	if got[0] != "alice@a.example wrote:" || got[1] != "> line 0" || got[200] != "> line 199" || got[201] != "> [...]" || len(got) != 202 {
		t.Errorf("quoted body: %d lines, first %q, %q, last %q %q", len(got), got[0], got[1], got[200], got[len(got)-1])
	}

	// No original text: just the agent's.
	orig = Original{From: []Address{alice}}
	if m, err = Reply(orig, []Address{me}, false, "Thanks", nil, nil); err != nil || m.Body != "Thanks" {
		t.Errorf("Reply without original text: body %q, %v", m.Body, err)
	}

	// The agent's body is checked.
	if _, err = Reply(sample, []Address{me}, false, "a\x00", nil, nil); err == nil || !strings.HasPrefix(err.Error(), "body: ") {
		t.Errorf("Reply with NUL in body: %v, want a body error", err)
	}
}

func TestReplyUntrustedOriginal(t *testing.T) {
	orig := sample
	orig.From = []Address{{"eve@evil.example\r\nBcc: x@evil.example", "alice@a.example"}}
	orig.Cc = []Address{{"=?utf-8?q?=0D=0ABcc:_x@evil?=", "carol@c.example"}, {"", ""}}
	m, err := Reply(orig, []Address{me}, true, "ok", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if m.To[0] != (Address{Addr: "alice@a.example"}) || m.Cc[0] != (Address{Addr: "carol@c.example"}) || len(m.Cc) != 1 {
		t.Errorf("To %+v, Cc %+v: want the unsafe names dropped, the addresses kept", m.To, m.Cc)
	}
	if !strings.Contains(m.Body, "eve@evil.example Bcc: x@evil.example wrote:") {
		t.Errorf("attribution should show the name on one line: %q", m.Body)
	}

	// A From the store gave with its local part unquoted is quoted again.
	orig.From = []Address{{"", "john doe@a.example"}}
	if m, err = Reply(orig, []Address{me}, false, "ok", nil, nil); err != nil || m.To[0].Addr != `"john doe"@a.example` {
		t.Errorf("Reply to an unquoted local part: To %+v, %v", m.To, err)
	}

	// A sender that cannot be written to is an error that says what to do.
	orig.From = []Address{{"", "alice@a.example, eve@evil.example"}}
	if _, err = Reply(orig, []Address{me}, false, "ok", nil, nil); err == nil || !strings.HasPrefix(err.Error(), "original.from[0]: ") {
		t.Errorf("Reply to a list as sender: %v, want an original.from[0] error", err)
	}
}

func TestForward(t *testing.T) {
	orig := sample
	orig.Subject = "FW: Fwd: Lunch"
	m, err := Forward(orig, me, []Address{bob, {"", "BOB@b.example"}}, []Address{carol}, "FYI\n")
	if err != nil {
		t.Fatal(err)
	}
	if m.Subject != "Fwd: Lunch" {
		t.Errorf("Subject = %q, want %q", m.Subject, "Fwd: Lunch")
	}
	if m.InReplyTo != "" || !reflect.DeepEqual(m.References, []string{"m1@a.example", "m2@b.example", "m3@a.example"}) {
		t.Errorf("In-Reply-To %q, References %v; want none and the thread", m.InReplyTo, m.References)
	}
	if !reflect.DeepEqual(addrs(m.To), []string{"bob@b.example"}) || !reflect.DeepEqual(addrs(m.Cc), []string{"carol@c.example"}) {
		t.Errorf("To %v, Cc %v", addrs(m.To), addrs(m.Cc))
	}
	want := "FYI\n\n---------- Forwarded message ----------\n" +
		"From: Alice <alice@a.example>\n" +
		"Date: Fri, 14 Mar 2025 09:26 +0100\n" +
		"Subject: FW: Fwd: Lunch\n" +
		"To: ME <ME@HOME.EXAMPLE>, Bob <bob@b.example>\n" +
		"Cc: Carol <carol@c.example>, Me.Alt@Work.Example, Bobby <BOB@b.example>\n" +
		"\nShall we?\n\n> earlier words\n"
	if m.Body != want {
		t.Errorf("Body =\n%s\nwant\n%s", m.Body, want)
	}
	if p := m.Preview(); !reflect.DeepEqual(p.BodyLines, []string{"FYI"}) {
		t.Errorf("Preview lines = %q, want only the agent's text", p.BodyLines)
	}
	orig.Subject = ""
	if m, _ = Forward(orig, me, []Address{bob}, nil, ""); m.Subject != "Fwd:" || !strings.HasPrefix(m.Body, "----") {
		t.Errorf("Forward with empty subject and text: subject %q, body starts %.10q", m.Subject, m.Body)
	}
	if _, err = Forward(orig, me, nil, nil, "x"); err == nil || !strings.HasPrefix(err.Error(), "to: ") {
		t.Errorf("Forward to nobody: %v, want a to error", err)
	}
	if _, err = Forward(orig, me, []Address{{"", "a@b.example\r\nBcc: eve@evil.example"}}, nil, "x"); err == nil || !strings.HasPrefix(err.Error(), "to[0]: ") {
		t.Errorf("Forward to a hand-built address with CRLF: %v, want a to[0] error", err)
	}
}
