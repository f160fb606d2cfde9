package audit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

var day = time.Date(2026, 11, 3, 9, 30, 15, 123456789, time.UTC)

func fixed(t time.Time) func() time.Time { return func() time.Time { return t } }

func mode(t *testing.T, path string) os.FileMode {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

// lines returns the raw lines of a month file, failing on any that is not a whole JSON object.
func lines(t *testing.T, state, month string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(state, "audit", month+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > 0 && b[len(b)-1] != '\n' {
		t.Fatalf("file does not end with a newline")
	}
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %d is not intact JSON: %v: %.200q", len(out)+1, err, sc.Text())
		}
		out = append(out, m)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestModes(t *testing.T) {
	state := t.TempDir()
	l := Open(state, fixed(day))
	defer l.Close()
	if _, err := os.Stat(filepath.Join(state, "audit")); !os.IsNotExist(err) {
		t.Fatalf("Open created the folder before any write: %v", err)
	}
	if err := l.Write(Entry{Tool: "mail_list", OK: true}); err != nil {
		t.Fatal(err)
	}
	if m := mode(t, filepath.Join(state, "audit")); m != 0o700 {
		t.Errorf("folder mode %o, want 700", m)
	}
	if m := mode(t, filepath.Join(state, "audit", "2026-11.jsonl")); m != 0o600 {
		t.Errorf("file mode %o, want 600", m)
	}
}

func TestTightensLooserModes(t *testing.T) {
	state := t.TempDir()
	dir := filepath.Join(state, "audit")
	file := filepath.Join(dir, "2026-11.jsonl")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(`{"time":"2026-11-01T00:00:00.000Z","client":"x","tool":"status","args":{},"ok":true,"length":0,"duration_ms":0}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Bypass the umask so the modes really are loose.
	os.Chmod(dir, 0o777)
	os.Chmod(file, 0o666)
	l := Open(state, fixed(day))
	defer l.Close()
	if err := l.Write(Entry{Tool: "mail_list"}); err != nil {
		t.Fatal(err)
	}
	if m := mode(t, dir); m != 0o700 {
		t.Errorf("folder mode %o, want 700", m)
	}
	if m := mode(t, file); m != 0o600 {
		t.Errorf("file mode %o, want 600", m)
	}
	if got := lines(t, state, "2026-11"); len(got) != 2 {
		t.Errorf("existing line lost or new one missing: %d lines, want 2", len(got))
	}
}

func TestOneLinePerWrite(t *testing.T) {
	state := t.TempDir()
	l := Open(state, fixed(day))
	defer l.Close()
	for i := range 3 {
		e := Entry{Tool: "mail_show", Args: map[string]any{"id": "m" + strconv.Itoa(i)}, OK: i != 1, Length: 10 * i, DurationMS: 7}
		if i == 1 {
			e.Error = "no message has id m1; list messages first"
			e.Client = "claude-code"
			e.Era = "modern"
		}
		if err := l.Write(e); err != nil {
			t.Fatal(err)
		}
	}
	got := lines(t, state, "2026-11")
	if len(got) != 3 {
		t.Fatalf("%d lines after 3 writes", len(got))
	}
	if got[0]["time"] != "2026-11-03T09:30:15.123Z" {
		t.Errorf("time written as %v, want UTC with milliseconds", got[0]["time"])
	}
	if got[0]["client"] != "cli" || got[1]["client"] != "claude-code" {
		t.Errorf("clients %v, %v; want cli, claude-code", got[0]["client"], got[1]["client"])
	}
	if _, ok := got[0]["error"]; ok {
		t.Errorf("a successful call carries an error key: %v", got[0])
	}
	if got[1]["ok"] != false || got[1]["error"] != "no message has id m1; list messages first" {
		t.Errorf("refusal not recorded: %v", got[1])
	}
	entries, skipped, err := Read(state, "2026-11")
	if err != nil || skipped != 0 || len(entries) != 3 {
		t.Fatalf("Read: %d entries, %d skipped, %v", len(entries), skipped, err)
	}
	if !entries[2].Time.Equal(day.Truncate(time.Millisecond)) || entries[2].Length != 20 || entries[2].Args["id"] != "m2" {
		t.Errorf("entry did not round-trip: %+v", entries[2])
	}
}

func TestWriteLimits(t *testing.T) {
	state := t.TempDir()
	l := Open(state, fixed(day))
	defer l.Close()
	ids := make([]string, 250)
	for i := range ids {
		ids[i] = fmt.Sprintf("m%d", i)
	}
	if err := l.Write(Entry{Tool: "mail_list", IDs: ids, Error: strings.Repeat("é", 500), Client: strings.Repeat("c", 1000)}); err != nil {
		t.Fatal(err)
	}
	if err := l.Write(Entry{}); err == nil {
		t.Error("an entry without a tool was written")
	}
	e, _, err := Read(state, "2026-11")
	if err != nil || len(e) != 1 {
		t.Fatalf("Read: %v, %v", e, err)
	}
	if len(e[0].IDs) != MaxIDs || e[0].IDsMore != 50 || e[0].IDs[199] != "m199" {
		t.Errorf("%d ids kept, ids_more %d; want 200 and 50", len(e[0].IDs), e[0].IDsMore)
	}
	if n := len([]rune(e[0].Error)); n != MaxErrorRunes {
		t.Errorf("error kept %d runes, want %d", n, MaxErrorRunes)
	}
	if n := len([]rune(e[0].Client)); n != MaxClientRune {
		t.Errorf("client kept %d runes, want %d", n, MaxClientRune)
	}
}

func TestMonthRollover(t *testing.T) {
	state := t.TempDir()
	now := time.Date(2026, 10, 31, 23, 59, 59, 999e6, time.UTC)
	l := Open(state, func() time.Time { return now })
	defer l.Close()
	if err := l.Write(Entry{Tool: "status"}); err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Millisecond)
	for range 2 {
		if err := l.Write(Entry{Tool: "status"}); err != nil {
			t.Fatal(err)
		}
	}
	// A time in another zone is filed by its UTC month.
	paris := time.FixedZone("CET", 3600)
	if err := l.Write(Entry{Tool: "status", Time: time.Date(2026, 12, 1, 0, 30, 0, 0, paris)}); err != nil {
		t.Fatal(err)
	}
	months, err := Months(state)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(months, ",") != "2026-10,2026-11" {
		t.Fatalf("months %v, want [2026-10 2026-11]", months)
	}
	for month, want := range map[string]int{"2026-10": 1, "2026-11": 3} {
		if n := len(lines(t, state, month)); n != want {
			t.Errorf("%s has %d lines, want %d", month, n, want)
		}
		if m := mode(t, filepath.Join(state, "audit", month+".jsonl")); m != 0o600 {
			t.Errorf("%s mode %o, want 600", month, m)
		}
	}
}

func TestMonthsIgnoresOtherFiles(t *testing.T) {
	state := t.TempDir()
	if m, err := Months(state); err != nil || len(m) != 0 {
		t.Fatalf("no folder: %v, %v", m, err)
	}
	dir := filepath.Join(state, "audit")
	os.MkdirAll(filepath.Join(dir, "2026-01.jsonl.d"), 0o700)
	for _, n := range []string{"2026-03.jsonl", "2025-12.jsonl", "2026-13.jsonl", "notes.txt", "2026-02.jsonl.tmp"} {
		os.WriteFile(filepath.Join(dir, n), nil, 0o600)
	}
	m, err := Months(state)
	if err != nil || strings.Join(m, ",") != "2025-12,2026-03" {
		t.Errorf("Months = %v, %v; want [2025-12 2026-03]", m, err)
	}
}

func TestReadSkipsDamagedLines(t *testing.T) {
	state := t.TempDir()
	l := Open(state, fixed(day))
	defer l.Close()
	l.Write(Entry{Tool: "mail_list", OK: true})
	l.Write(Entry{Tool: "mail_show", OK: true})
	f, err := os.OpenFile(filepath.Join(state, "audit", "2026-11.jsonl"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("{\"time\":\"2026-11-03T09:30:15.123Z\",\"tool\":\"mail_se\x00\n\n[]\n{\"ok\":true}\n")
	f.Close()
	l.Write(Entry{Tool: "mail_thread", OK: true})
	// A crash mid-write leaves a last line without its end.
	f, _ = os.OpenFile(filepath.Join(state, "audit", "2026-11.jsonl"), os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(`{"time":"2026-11-03T09:30:15.123Z","client":"cli","tool":"mail_l`)
	f.Close()

	entries, skipped, err := Read(state, "2026-11")
	if err != nil {
		t.Fatal(err)
	}
	var tools []string
	for _, e := range entries {
		tools = append(tools, e.Tool)
	}
	if strings.Join(tools, ",") != "mail_list,mail_show,mail_thread" || skipped != 4 {
		t.Errorf("Read = %v, %d skipped; want the 3 intact entries and 4 skipped", tools, skipped)
	}

	if e, n, err := Read(state, "2026-12"); err != nil || len(e) != 0 || n != 0 {
		t.Errorf("missing month: %v, %d, %v; want nothing and no error", e, n, err)
	}
	for _, bad := range []string{"../2026-11", "2026-11.jsonl", "2026-1", ""} {
		if _, _, err := Read(state, bad); err == nil {
			t.Errorf("Read(%q) accepted a month that is not YYYY-MM", bad)
		}
	}
}

// bigEntry makes a line of about 14 KB, far over a pipe's atomic size, so torn writes would show.
func bigEntry(writer string, i int) Entry {
	ids := make([]string, MaxIDs)
	for k := range ids {
		ids[k] = fmt.Sprintf("%s-%04d-%s", writer, i, strings.Repeat(string(rune('a'+k%26)), 50))
	}
	return Entry{Tool: "mail_list", Client: writer, Args: map[string]any{"n": i}, IDs: ids, OK: true}
}

func checkIntact(t *testing.T, state string, writers map[string]int) {
	t.Helper()
	entries, skipped, err := Read(state, "2026-11")
	if err != nil {
		t.Fatal(err)
	}
	if skipped != 0 {
		t.Errorf("%d torn lines", skipped)
	}
	seen := map[string]int{}
	for _, e := range entries {
		want := bigEntry(e.Client, int(e.Args["n"].(float64)))
		if strings.Join(e.IDs, ",") != strings.Join(want.IDs, ",") {
			t.Fatalf("line from %s #%v is mixed with another", e.Client, e.Args["n"])
		}
		seen[e.Client]++
	}
	for w, n := range writers {
		if seen[w] != n {
			t.Errorf("%s: %d lines, want %d", w, seen[w], n)
		}
	}
}

func TestConcurrentGoroutines(t *testing.T) {
	state := t.TempDir()
	l := Open(state, fixed(day))
	defer l.Close()
	want := map[string]int{}
	var wg sync.WaitGroup
	for g := range 20 {
		name := fmt.Sprintf("g%02d", g)
		want[name] = 25
		wg.Go(func() {
			for i := range 25 {
				if err := l.Write(bigEntry(name, i)); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	checkIntact(t, state, want)
}

// TestHelperProcess is not a test: TestConcurrentProcesses runs the test binary with it to get
// a second writer process.
func TestHelperProcess(t *testing.T) {
	state, name := os.Getenv("AUDIT_HELPER_STATE"), os.Getenv("AUDIT_HELPER_NAME")
	if state == "" {
		t.Skip("helper process for TestConcurrentProcesses")
	}
	n, _ := strconv.Atoi(os.Getenv("AUDIT_HELPER_COUNT"))
	l := Open(state, fixed(day))
	defer l.Close()
	for i := range n {
		if err := l.Write(bigEntry(name, i)); err != nil {
			t.Fatal(err)
		}
	}
}

func TestConcurrentProcesses(t *testing.T) {
	state := t.TempDir()
	const n = 300
	var cmds []*exec.Cmd
	want := map[string]int{}
	for _, name := range []string{"p1", "p2"} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(), "AUDIT_HELPER_STATE="+state, "AUDIT_HELPER_NAME="+name, "AUDIT_HELPER_COUNT="+strconv.Itoa(n))
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
		want[name] = n
	}
	for _, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("helper process: %v", err)
		}
	}
	checkIntact(t, state, want)
}

// The whole path a caller takes: arguments summarised, error text masked, the line written.
func TestFileNeverHoldsBodyOrCode(t *testing.T) {
	state := t.TempDir()
	l := Open(state, fixed(day))
	defer l.Close()
	body := "Dear Bob, " + strings.Repeat("the secret plan is ", 600)
	args := map[string]any{
		"to":      []any{"bob@example.com"},
		"subject": "Your sign-in code 482913",
		"body":    body,
	}
	e := Entry{
		Tool:  "drafts_create",
		Args:  Summarize(args, map[string]bool{"body": true}, codeMask),
		Error: ErrorText("the server refused code 4829 13 for bob@example.com "+strings.Repeat("and more ", 50), codeMask),
	}
	if err := l.Write(e); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(state, "audit", "2026-11.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, leak := range []string{"482913", "4829 13", "secret plan"} {
		if bytes.Contains(b, []byte(leak)) {
			t.Errorf("the log holds %q: %s", leak, b)
		}
	}
	if !bytes.Contains(b, []byte(fmt.Sprintf(`"body":{"length":%d}`, len(body)))) {
		t.Errorf("the body's length is not recorded: %s", b)
	}
}

var timeRE = regexp.MustCompile(`"time":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z"`)

func TestTimeAlwaysHasMilliseconds(t *testing.T) {
	for _, tm := range []time.Time{time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), day, day.In(time.FixedZone("X", -5*3600))} {
		b, err := json.Marshal(Entry{Time: tm, Tool: "status"})
		if err != nil {
			t.Fatal(err)
		}
		if !timeRE.Match(b) {
			t.Errorf("time of %v written as %s", tm, b)
		}
	}
}
