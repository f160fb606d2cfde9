package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
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
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, 0, "1"},
		{`{"jsonrpc":"2.0","id":"x","method":"ping","params":null}`, 0, `"x"`},
		{`{"jsonrpc":"2.0","method":"n"}`, 0, ""},
		{`{"jsonrpc":"2.0","id":1,"method":"ping"`, CodeParseError, ""},
		{`{"jsonrpc":"2.0","id":null,"method":"ping"}`, CodeInvalidRequest, ""},
		{`{"jsonrpc":"2.0","id":[1],"method":"ping"}`, CodeInvalidRequest, ""},
		{`{"jsonrpc":"2.1","id":1,"method":"ping"}`, CodeInvalidRequest, "1"},
		{`{"jsonrpc":"2.0","id":1,"result":{}}`, CodeInvalidRequest, "1"},
		{`{"jsonrpc":"2.0","id":1,"method":"m","params":3}`, CodeInvalidRequest, "1"},
		{`7`, CodeInvalidRequest, ""},
	}
	for _, c := range cases {
		m, err := Parse([]byte(c.in))
		code := 0
		if err != nil {
			code = err.Code
		}
		if code != c.code {
			t.Errorf("%s: code %d, want %d", c.in, code, c.code)
		}
		if m != nil && string(m.ID) != c.id {
			t.Errorf("%s: id %s, want %s", c.in, m.ID, c.id)
		}
	}
}

func TestAppendError(t *testing.T) {
	b := AppendError(nil, nil, &Error{Code: -32022, Message: `say "hi"`, Data: map[string]any{"requested": "x"}})
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	if m["id"] != nil || m["error"].(map[string]any)["data"].(map[string]any)["requested"] != "x" {
		t.Fatalf("%s", b)
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

// FuzzParse: Parse never panics and an accepted message has a method and a valid id.
func FuzzParse(f *testing.F) {
	for _, s := range []string{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, `{"id":null}`, `[]`, `{"jsonrpc":"2.0","id":"a","method":"x","params":{"_meta":{}}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		m, err := Parse(in)
		if err == nil {
			if m.Method == "" && !strings.Contains(string(in), `"method":""`) && !strings.Contains(string(in), `"method"`) {
				t.Fatalf("accepted without a method: %q", in)
			}
			if m.ID != nil && !json.Valid(m.ID) {
				t.Fatalf("invalid id %q", m.ID)
			}
		}
	})
}
