package managesieve

import (
	"bufio"
	"encoding/base64"
	"errors"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
)

const greeting = "\"IMPLEMENTATION\" \"Fake \\\"Sieve\\\" 1.0\"\r\n" +
	"\"SIEVE\" \"fileinto imap4flags mailbox\"\r\n" +
	"\"SASL\" \"PLAIN\"\r\n" +
	"\"STARTTLS\"\r\n" +
	"\"VERSION\" \"1.0\"\r\n" +
	"OK \"ready\"\r\n"

// fake runs a scripted server: after the greeting, for each command it reads it answers with
// the reply of the first step whose prefix the command has, and records the commands (with
// the literals they carry).
type fake struct {
	t     *testing.T
	steps [][2]string // command prefix, reply
	got   chan string
}

func start(t *testing.T, greet string, steps ...[2]string) (*Client, *fake) {
	t.Helper()
	cli, srv := net.Pipe()
	f := &fake{t: t, steps: steps, got: make(chan string, 100)}
	go f.serve(srv, greet)
	t.Cleanup(func() { cli.Close(); srv.Close() })
	c, err := New(cli)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return c, f
}

func (f *fake) serve(conn net.Conn, greet string) {
	defer conn.Close()
	if _, err := io.WriteString(conn, greet); err != nil {
		return
	}
	r := bufio.NewReader(conn)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		cmd := strings.TrimRight(line, "\r\n")
		// A non-synchronizing literal at the end of the line: read it too.
		if i := strings.LastIndexByte(cmd, '{'); i >= 0 && strings.HasSuffix(cmd, "+}") {
			var n int
			for _, d := range cmd[i+1 : len(cmd)-2] {
				n = n*10 + int(d-'0')
			}
			buf := make([]byte, n)
			if _, err := io.ReadFull(r, buf); err != nil {
				return
			}
			cmd += "\n" + string(buf)
			// The command line ends after the literal.
			rest, _ := r.ReadString('\n')
			cmd += rest
		}
		f.got <- cmd
		reply := "NO \"unexpected command\"\r\n"
		for _, s := range f.steps {
			if strings.HasPrefix(cmd, s[0]) {
				reply = s[1]
				break
			}
		}
		// A reply ending in <close> is cut there: the server goes away.
		cut := strings.HasSuffix(reply, "<close>")
		if _, err := io.WriteString(conn, strings.TrimSuffix(reply, "<close>")); err != nil || cut {
			return
		}
	}
}

func TestGreetingCapabilities(t *testing.T) {
	c, _ := start(t, greeting)
	caps := c.Capabilities()
	if caps.Implementation != `Fake "Sieve" 1.0` || !caps.StartTLS || caps.Version != "1.0" {
		t.Errorf("capabilities: %+v", caps)
	}
	if !caps.Has("imap4flags") || !caps.Has("FILEINTO") || caps.Has("body") {
		t.Errorf("Has: sieve list %v", caps.Sieve)
	}
	if len(caps.SASL) != 1 || caps.SASL[0] != "PLAIN" {
		t.Errorf("SASL: %v", caps.SASL)
	}
}

func TestAuthenticatePlain(t *testing.T) {
	c, f := start(t, greeting, [2]string{"AUTHENTICATE", "OK\r\n"})
	if err := c.AuthenticatePlain("sam", `p"w\`); err != nil {
		t.Fatal(err)
	}
	cmd := <-f.got
	want := `AUTHENTICATE "PLAIN" "` + base64.StdEncoding.EncodeToString([]byte("\x00sam\x00p\"w\\")) + `"`
	if cmd != want {
		t.Errorf("sent %q, want %q", cmd, want)
	}
}

func TestAuthenticateRefused(t *testing.T) {
	c, _ := start(t, greeting, [2]string{"AUTHENTICATE", "NO (AUTH-TOO-WEAK) \"Authentication failed.\"\r\n"})
	err := c.AuthenticatePlain("sam", "x")
	var e *Error
	if !errors.As(err, &e) || e.Status != "NO" || e.Code != "AUTH-TOO-WEAK" || e.Text != "Authentication failed." {
		t.Fatalf("err = %#v", err)
	}
	if !strings.Contains(err.Error(), "Authentication failed.") {
		t.Errorf("message %q lacks the server's text", err)
	}
}

// Names come as quoted strings or literals, with escapes; ACTIVE marks one.
func TestListScripts(t *testing.T) {
	reply := "\"plain\"\r\n" +
		"\"with \\\"quote\\\" and \\\\\" ACTIVE\r\n" +
		"{11}\r\nline\r\nbreak\r\n" +
		"OK \"Listscripts completed.\"\r\n"
	c, _ := start(t, greeting, [2]string{"LISTSCRIPTS", reply})
	got, err := c.ListScripts()
	if err != nil {
		t.Fatal(err)
	}
	want := []Script{{"plain", false}, {`with "quote" and \`, true}, {"line\r\nbreak", false}}
	if len(got) != len(want) {
		t.Fatalf("got %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("script %d: %+v, want %+v", i, got[i], want[i])
		}
	}
}

// A script goes up as a literal whatever it holds; the server's compile errors, sent as a
// literal after NO, come back whole.
func TestPutScriptErrorsAsLiteral(t *testing.T) {
	errText := "line 2: error: unknown command 'fileintoo'.\r\nerror: validation failed.\r\n"
	c, f := start(t, greeting, [2]string{"PUTSCRIPT", "NO {" + itoa(len(errText)) + "}\r\n" + errText + "\r\n"},
		[2]string{"SETACTIVE", "OK (WARNINGS) \"fine\"\r\n"})
	script := "require \"fileinto\";\r\nfileintoo \"x\";\r\n"
	err := c.PutScript(`my "script"`, script)
	var e *Error
	if !errors.As(err, &e) || e.Text != errText {
		t.Fatalf("err = %#v", err)
	}
	cmd := <-f.got
	want := `PUTSCRIPT "my \"script\"" {` + itoa(len(script)) + "+}\n" + script + "\r\n"
	if cmd != want {
		t.Errorf("sent %q, want %q", cmd, want)
	}
	// The connection is still usable.
	if err := c.SetActive("x"); err != nil {
		t.Errorf("SetActive after a NO: %v", err)
	}
}

func TestGetScript(t *testing.T) {
	body := "# hi\r\nkeep;\r\n"
	c, _ := start(t, greeting, [2]string{"GETSCRIPT", "{" + itoa(len(body)) + "}\r\n" + body + "\r\nOK \"Getscript completed.\"\r\n"})
	got, err := c.GetScript("s")
	if err != nil || got != body {
		t.Fatalf("GetScript = %q, %v", got, err)
	}
}

func TestNonexistent(t *testing.T) {
	c, _ := start(t, greeting, [2]string{"GETSCRIPT", "NO (NONEXISTENT) \"Script does not exist.\"\r\n"})
	_, err := c.GetScript("missing")
	var e *Error
	if !errors.As(err, &e) || e.Code != "NONEXISTENT" {
		t.Fatalf("err = %v", err)
	}
}

func TestBye(t *testing.T) {
	c, _ := start(t, greeting, [2]string{"LISTSCRIPTS", "BYE (TRYLATER) \"Server shutting down.\"\r\n"})
	_, err := c.ListScripts()
	var e *Error
	if !errors.As(err, &e) || e.Status != "BYE" || e.Code != "TRYLATER" {
		t.Fatalf("err = %v", err)
	}
}

// Malformed and hostile answers are errors, never a hang or an allocation of what the server
// claims.
func TestMalformed(t *testing.T) {
	for _, tc := range []struct{ name, reply string }{
		{"huge literal", "{999999999999}\r\n"},
		{"literal length with letters", "{12a}\r\nxx\r\nOK\r\n"},
		{"cut in a quoted string", "\"abc<close>"},
		{"cut in a literal", "{10}\r\nabc<close>"},
		{"line break in a quoted string", "\"ab\ncd\"\r\nOK\r\n"},
		{"unterminated code", "NO (QUOTA\r\n"},
		{"overlong line", strings.Repeat("a", maxLine+10) + "\r\nOK\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := start(t, greeting, [2]string{"LISTSCRIPTS", tc.reply})
			if _, err := c.ListScripts(); err == nil {
				t.Fatal("no error")
			} else if tc.name != "unterminated code" && !errors.Is(err, ErrProtocol) {
				t.Errorf("err = %v, want ErrProtocol", err)
			}
		})
	}
}

// A greeting that is not ManageSieve (an IMAP server on the port) is refused.
func TestWrongServer(t *testing.T) {
	cli, srv := net.Pipe()
	defer cli.Close()
	go func() {
		_, _ = io.WriteString(srv, "* OK [CAPABILITY IMAP4rev1] Dovecot ready.\r\n")
		srv.Close()
	}()
	if _, err := New(cli); err == nil {
		t.Fatal("New accepted an IMAP greeting")
	}
}

func TestQuote(t *testing.T) {
	for in, want := range map[string]string{
		`plain`:    `"plain"`,
		`a"b\c`:    `"a\"b\\c"`,
		"two\r\nl": "{6+}\r\ntwo\r\nl",
	} {
		if got := quote(in); got != want {
			t.Errorf("quote(%q) = %q, want %q", in, got, want)
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
