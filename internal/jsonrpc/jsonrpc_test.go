package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func lines(t *testing.T, in string) ([]string, []error) {
	t.Helper()
	r := NewReader(strings.NewReader(in))
	var out []string
	var errs []error
	for i := 0; i < 100; i++ {
		l, err := r.Next()
		if err == io.EOF {
			return out, errs
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, string(l))
	}
	t.Fatal("reader did not reach EOF")
	return nil, nil
}

func TestReaderLines(t *testing.T) {
	got, errs := lines(t, "a\r\n\n  \nb\nc")
	if strings.Join(got, "|") != "a|b|c" || len(errs) != 0 {
		t.Fatalf("got %q %v", got, errs)
	}
}

func TestReaderLongLineSkipped(t *testing.T) {
	long := strings.Repeat("x", MaxLine+1)
	got, errs := lines(t, "first\n"+long+"\nafter\n")
	if strings.Join(got, "|") != "first|after" || len(errs) != 1 || !errors.Is(errs[0], ErrLineTooLong) {
		t.Fatalf("got %d lines, errors %v", len(got), errs)
	}
	exact := strings.Repeat("y", MaxLine)
	got, errs = lines(t, exact+"\nz")
	if len(got) != 2 || len(got[0]) != MaxLine || len(errs) != 0 {
		t.Fatalf("a line of exactly MaxLine was not read: %d lines, %v", len(got), errs)
	}
	// A long last line without a newline.
	got, errs = lines(t, "a\n"+long)
	if len(got) != 1 || len(errs) != 1 {
		t.Fatalf("long last line: %d lines (first %d bytes), errors %v", len(got), len(got[0]), errs)
	}
}

func TestReaderInvalidUTF8(t *testing.T) {
	got, errs := lines(t, "ok\n\xff\xfe\nnext\n")
	if strings.Join(got, "|") != "ok|next" || len(errs) != 1 || !errors.Is(errs[0], ErrNotUTF8) {
		t.Fatalf("got %q %v", got, errs)
	}
}

func TestParse(t *testing.T) {
	cases := []struct {
		in   string
		code int
		id   string
		kind string // request, notification or response, for an accepted message
		// reply is the id Refusal answers a refused message with: "-" when it is not answered.
		reply string
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, 0, "1", "request", ""},
		{`{"jsonrpc":"2.0","id":"x","method":"ping","params":null}`, 0, `"x"`, "request", ""},
		{`{"jsonrpc":"2.0","id":-1.5e3,"method":"ping"}`, 0, `-1.5e3`, "request", ""},
		{`{"jsonrpc":"2.0","id":"\u00e9","method":"ping"}`, 0, `"\u00e9"`, "request", ""},
		{`{"jsonrpc":"2.0","method":"n"}`, 0, "", "notification", ""},
		{`{"jsonrpc":"2.0","id":1,"result":{}}`, 0, "1", "response", ""},
		{`{"jsonrpc":"2.0","id":"a","error":{"code":-1,"message":"no"}}`, 0, `"a"`, "response", ""},
		{`{"jsonrpc":"2.0","id":1,"method":"ping"`, CodeParseError, "", "", "null"},
		{`7`, CodeInvalidRequest, "", "", "null"},
		{`{"jsonrpc":"2.0","id":null,"method":"ping"}`, CodeInvalidRequest, "", "", "null"},
		{`{"jsonrpc":"2.0","id":[1],"method":"ping"}`, CodeInvalidRequest, "", "", "null"},
		{`{"jsonrpc":"2.0","id":true,"method":"ping"}`, CodeInvalidRequest, "", "", "null"},
		{`{"jsonrpc":"2.1","id":1,"method":"ping"}`, CodeInvalidRequest, "1", "", "1"},
		{`{"id":2,"method":"ping"}`, CodeInvalidRequest, "2", "", "2"},
		{`{"jsonrpc":"2.0","id":3,"method":42}`, CodeInvalidRequest, "3", "", "3"},
		{`{"jsonrpc":"2.0","id":4}`, CodeInvalidRequest, "4", "", "4"},
		{`{"jsonrpc":"2.0","result":{}}`, CodeInvalidRequest, "", "", "null"},
		{`{"jsonrpc":"2.0","id":1,"method":"m","params":3}`, CodeInvalidRequest, "1", "", "1"},
		// A malformed notification is never answered.
		{`{"jsonrpc":"1.0","method":"notifications/initialized"}`, CodeInvalidRequest, "", "", "-"},
		{`{"jsonrpc":"2.0","method":"m","params":"s"}`, CodeInvalidRequest, "", "", "-"},
	}
	for _, c := range cases {
		m, err := Parse([]byte(c.in))
		code := 0
		if err != nil {
			code = err.Code
		}
		if code != c.code {
			t.Errorf("%s: code %d, want %d", c.in, code, c.code)
			continue
		}
		if m != nil && string(m.ID) != c.id {
			t.Errorf("%s: id %s, want %s", c.in, m.ID, c.id)
		}
		if err == nil {
			kind := "request"
			switch {
			case m.IsResponse():
				kind = "response"
			case m.IsNotification():
				kind = "notification"
			}
			if kind != c.kind {
				t.Errorf("%s: a %s, want a %s", c.in, kind, c.kind)
			}
			continue
		}
		r := Refusal(m, err)
		if c.reply == "-" {
			if r != nil {
				t.Errorf("%s: a malformed notification was answered: %s", c.in, r)
			}
			continue
		}
		var env struct {
			ID    json.RawMessage `json:"id"`
			Error *Error          `json:"error"`
		}
		if json.Unmarshal(r, &env) != nil || string(env.ID) != c.reply || env.Error == nil || env.Error.Code != c.code {
			t.Errorf("%s: refused with %s, want id %s and code %d", c.in, r, c.reply, c.code)
		}
	}
}

// TestParseResponse: a response's result and error are read, and Parse copies
// what it keeps, since the reader reuses the line.
func TestParseResponse(t *testing.T) {
	line := []byte(`{"jsonrpc":"2.0","id":"q","error":{"code":-32000,"message":"no window","data":{"k":1}}}`)
	m, err := Parse(line)
	if err != nil || m.Error == nil || m.Error.Code != -32000 || m.Error.Message != "no window" || string(m.Error.Data.(json.RawMessage)) != `{"k":1}` {
		t.Fatalf("%+v %v", m, err)
	}
	line = []byte(`{"jsonrpc":"2.0","id":"q","result":{"action":"accept"}}`)
	m, _ = Parse(line)
	for i := range line {
		line[i] = 'x'
	}
	if string(m.Result) != `{"action":"accept"}` || string(m.ID) != `"q"` {
		t.Fatalf("the message changed with its line: %s %s", m.ID, m.Result)
	}
}

func TestEncodeError(t *testing.T) {
	b := EncodeError(nil, &Error{Code: -32022, Message: `say "hi" <now>`, Data: map[string]any{"requested": "x"}})
	want := `{"jsonrpc":"2.0","id":null,"error":{"code":-32022,"message":"say \"hi\" \u003cnow\u003e","data":{"requested":"x"}}}`
	if string(b) != want {
		t.Fatalf("got  %s\nwant %s", b, want)
	}
	// Data that cannot be encoded is left out; the error still goes.
	b = EncodeError(json.RawMessage(`"a"`), &Error{Code: 1, Message: "m", Data: func() {}})
	if string(b) != `{"jsonrpc":"2.0","id":"a","error":{"code":1,"message":"m"}}` {
		t.Fatalf("got %s", b)
	}
}

func TestEncodeEnvelopes(t *testing.T) {
	cases := []struct {
		got  func() ([]byte, error)
		want string
	}{
		{func() ([]byte, error) { return EncodeResult(json.RawMessage(`7`), map[string]any{}) }, `{"jsonrpc":"2.0","id":7,"result":{}}`},
		// The id is echoed as written, even where encoding/json would escape it.
		{func() ([]byte, error) { return EncodeResult(json.RawMessage(`"<\u00e9>"`), json.RawMessage(`{"a":1}`)) }, `{"jsonrpc":"2.0","id":"<\u00e9>","result":{"a":1}}`},
		{func() ([]byte, error) { return EncodeResult(json.RawMessage(`1e3`), map[string]string{"t": "<b>"}) }, `{"jsonrpc":"2.0","id":1e3,"result":{"t":"<b>"}}`},
		{func() ([]byte, error) { return EncodeNotification("notifications/tools/list_changed", nil) }, `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`},
		{func() ([]byte, error) { return EncodeRequest(json.RawMessage(`"q-1"`), "m", map[string]int{"x": 1}) }, `{"jsonrpc":"2.0","id":"q-1","method":"m","params":{"x":1}}`},
		{func() ([]byte, error) { return EncodeBatch([][]byte{[]byte(`{"a":1}`), []byte(`{"b":2}`)}) }, `[{"a":1},{"b":2}]`},
	}
	for i, c := range cases {
		b, err := c.got()
		if err != nil || string(b) != c.want {
			t.Errorf("%d: got %s (%v), want %s", i, b, err, c.want)
		}
	}
	if _, err := EncodeResult(json.RawMessage(`1`), func() {}); err == nil {
		t.Error("a result that cannot be encoded gave no error")
	}
}

// FuzzReader: the reader never panics, never returns a line over MaxLine or one
// that is not UTF-8, and always reaches the end.
func FuzzReader(f *testing.F) {
	for _, s := range []string{"", "\n", "a\r\nb", "\xff\n{}", `{"jsonrpc":"2.0"}` + "\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		// A 16-byte buffer: lines cross the buffer's edge, as long lines do in use.
		r := newReaderSize(bytes.NewReader(in), 16)
		for i := 0; i <= len(in)+1; i++ {
			l, err := r.Next()
			if err == io.EOF {
				return
			}
			if err != nil {
				continue
			}
			if len(l) > MaxLine || bytes.ContainsRune(l, '\n') {
				t.Fatalf("bad line %q", l)
			}
		}
		t.Fatal("no EOF")
	})
}

// FuzzParse: Parse never panics, an accepted request has a method and a valid
// id, and a refused message is answered with JSON or not at all.
func FuzzParse(f *testing.F) {
	for _, s := range []string{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, `{"id":null}`, `[]`, `{"jsonrpc":"2.0","id":"a","method":"x","params":{"_meta":{}}}`, `{"id":1,"result":{}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		m, err := Parse(in)
		if err != nil {
			if r := Refusal(m, err); r != nil && !json.Valid(r) {
				t.Fatalf("refusal %q is not JSON", r)
			}
			return
		}
		if !m.IsResponse() {
			if m.Method == "" && !strings.Contains(string(in), `"method"`) {
				t.Fatalf("accepted without a method: %q", in)
			}
			if m.ID != nil && !json.Valid(m.ID) {
				t.Fatalf("invalid id %q", m.ID)
			}
		}
	})
}

// TestReaderPartialReads: a line that arrives a byte or a few at a time, or
// crosses the reader's buffer, is read whole, and so is the line after it.
func TestReaderPartialReads(t *testing.T) {
	long := strings.Repeat("é", 100) // 200 bytes, several 16-byte buffers
	in := "{\"a\":1}\r\n" + long + "\n\nlast"
	for name, wrap := range map[string]func(io.Reader) io.Reader{
		"one byte": iotest.OneByteReader,
		"half":     iotest.HalfReader,
		"data+EOF": iotest.DataErrReader,
	} {
		r := newReaderSize(wrap(strings.NewReader(in)), 16)
		var got []string
		for {
			l, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			got = append(got, string(l))
		}
		if strings.Join(got, "|") != `{"a":1}|`+long+"|last" {
			t.Errorf("%s: got %q", name, got)
		}
	}
}

// TestReaderError: a read error other than EOF is returned, not taken as the end.
func TestReaderError(t *testing.T) {
	boom := errors.New("boom")
	r := NewReader(io.MultiReader(strings.NewReader("ok\npart"), iotest.ErrReader(boom)))
	if l, err := r.Next(); err != nil || string(l) != "ok" {
		t.Fatalf("%q %v", l, err)
	}
	if _, err := r.Next(); !errors.Is(err, boom) {
		t.Fatalf("got %v, want the read error", err)
	}
}

// TestReaderLongLineSmallBuffer: a line over MaxLine that crosses the buffer
// many times is skipped whole; the reader resumes at the next line.
func TestReaderLongLineSmallBuffer(t *testing.T) {
	in := "a\n" + strings.Repeat("x", MaxLine+100) + "\nb\n"
	r := newReaderSize(iotest.HalfReader(strings.NewReader(in)), 4096)
	var got []string
	var errs []error
	for {
		l, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		got = append(got, string(l))
	}
	if strings.Join(got, "|") != "a|b" || len(errs) != 1 || !errors.Is(errs[0], ErrLineTooLong) {
		t.Fatalf("got %q, errors %v", got, errs)
	}
}
