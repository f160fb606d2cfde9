package termsafe

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestLineEscapesEveryClass(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"plain ASCII is untouched", "mail_search ok 12 bytes", "mail_search ok 12 bytes"},
		{"letters of other scripts and emoji stay", "Zoë 東京 مرحبا 👍🏽 ❤️", "Zoë 東京 مرحبا 👍🏽 ❤️"},
		{"newline", "evil\n2026-01-01 fake", `evil\n2026-01-01 fake`},
		{"carriage return and tab", "a\rb\tc", `a\rb\tc`},
		{"NUL, BEL, other C0", "\x00\x07\x08\x0b\x0c\x1f", `\x00\x07\x08\x0b\x0c\x1f`},
		{"OSC title", "\x1b]0;pwn\x07", `\x1b]0;pwn\x07`},
		{"CSI clear screen", "\x1b[2J\x1b[31mred", `\x1b[2J\x1b[31mred`},
		{"DEL", "a\x7fb", `a\x7fb`},
		{"C1 CSI and NEL", "a\u009b2Jb\u0085c", `a\u009b2Jb\u0085c`},
		{"bidi overrides and embeddings", "\u202a\u202b\u202c\u202d\u202e", `\u202a\u202b\u202c\u202d\u202e`},
		{"bidi isolates", "\u2066\u2067\u2068\u2069", `\u2066\u2067\u2068\u2069`},
		{"bidi marks", "\u200e\u200f\u061c", `\u200e\u200f\u061c`},
		{"zero-width and BOM", "a\u200bb\u200cc\u200dd\u2060e\ufefff", `a\u200bb\u200cc\u200dd\u2060e\ufefff`},
		{"soft hyphen", "pay\u00adpal", `pay\u00adpal`},
		{"line and paragraph separators", "a\u2028b\u2029c", `a\u2028b\u2029c`},
		{"Hangul filler and grapheme joiner", "a\u3164b\u034fc", `a\u3164b\u034fc`},
		{"tag characters", "x\U000e0041\U000e007f", `x\U000e0041\U000e007f`},
		{"noncharacters", "\ufffe\U0010ffff", `\ufffe\U0010ffff`},
		{"invalid UTF-8", "a\xffb\xc3", `a\xffb\xc3`},
		{"backslash", `C:\x1b\u202e`, `C:\\x1b\\u202e`},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := Line(c.in); got != c.want {
				t.Errorf("Line(%q) = %q, want %q", c.in, got, c.want)
			}
		})
	}
}

func TestTextKeepsNewlinesAndTabsOnly(t *testing.T) {
	in := "To: a@example.com\n\tSubject: \x1b[2Jhi\u202e\r\n\\"
	want := "To: a@example.com\n\tSubject: \\x1b[2Jhi\\u202e\\r\n\\\\"
	if got := Text(in); got != want {
		t.Errorf("Text(%q) = %q, want %q", in, got, want)
	}
}

// The output never holds a byte or character a terminal acts on, and is one line.
func TestLineOutputIsInert(t *testing.T) {
	for r := rune(0); r <= utf8.MaxRune; r++ {
		if r >= 0xd800 && r <= 0xdfff {
			continue
		}
		s := "a" + string(r) + "b"
		out := Line(s)
		for _, o := range out {
			if o < 0x20 || o == 0x7f || (o >= 0x80 && o <= 0x9f) || (Unsafe(o) && o != '\\') {
				t.Fatalf("Line(%q) = %q still holds %U", s, out, o)
			}
		}
	}
}

// unescape reverses Line, for the test: the output reads back to exactly the input.
func unescape(t *testing.T, s string) string {
	t.Helper()
	var b []byte
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			b = append(b, s[i])
			continue
		}
		i++
		switch s[i] {
		case '\\':
			b = append(b, '\\')
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 't':
			b = append(b, '\t')
		case 'x', 'u', 'U':
			w := map[byte]int{'x': 2, 'u': 4, 'U': 8}[s[i]]
			n, err := strconv.ParseUint(s[i+1:i+1+w], 16, 32)
			if err != nil {
				t.Fatalf("bad escape in %q: %v", s, err)
			}
			if s[i] == 'x' {
				b = append(b, byte(n))
			} else {
				b = utf8.AppendRune(b, rune(n))
			}
			i += w
		default:
			t.Fatalf("unknown escape \\%c in %q", s[i], s)
		}
	}
	return string(b)
}

func TestLineReadsBackUnambiguously(t *testing.T) {
	for _, s := range []string{
		"plain",
		`\x1b` + "\x1b",        // the four characters and the real ESC differ in the output
		`\\u202e` + "\u202e\\", // so do a typed escape and the character
		"evil\n2026 fake\x1b]0;pwn\x07\u202e\xff\U000e0041 ok",
		"a\\\\\\b",
	} {
		out := Line(s)
		if back := unescape(t, out); back != s {
			t.Errorf("Line(%q) = %q reads back as %q", s, out, back)
		}
	}
	if Line(`\x1b`) == Line("\x1b") {
		t.Error("a typed \\x1b and a real ESC look the same")
	}
}

func TestJSONEscapesWhatEncodingJSONLeavesRaw(t *testing.T) {
	v := map[string]string{"client": "evil\n\x1b]0;pwn\x07\u202e\u0085\x7f\U000e0041 Zoë 👍"}
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	out := JSON(raw)
	for _, r := range string(out) {
		if r < 0x20 || Unsafe(r) && r != '\\' {
			t.Fatalf("JSON output %q still holds %U", out, r)
		}
	}
	if !strings.Contains(string(out), `\u202e`) || !strings.Contains(string(out), `\udb40\udc41`) || !strings.Contains(string(out), "Zoë 👍") {
		t.Errorf("JSON output %s", out)
	}
	var back map[string]string
	if err := json.Unmarshal(out, &back); err != nil || back["client"] != v["client"] {
		t.Errorf("JSON output does not decode to the same value: %q, %v", back["client"], err)
	}
	if plain := []byte(`{"a":"b"}`); &JSON(plain)[0] != &plain[0] {
		t.Error("plain ASCII JSON was copied")
	}
}
