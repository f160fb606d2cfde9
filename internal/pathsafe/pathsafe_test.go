package pathsafe

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestJoinRefuses(t *testing.T) {
	root := t.TempDir()
	bad := []string{
		"", ".", "..", "../x", "a/../../b", "../../.bashrc", `..\..\x`, `a\..\..\x`, "a/./b",
		"/etc/passwd", `\x`, `C:\x`, "C:x", "c:/x", "z:",
		`\\server\share`, "//server/share", `\/server`, `/\server`,
		"CON", "con.txt", "Nul.tar.gz", "COM1", "com9.log", "lpt1", "LPT9.doc", "CON .txt",
		"aux.", "prn ", "sub/CON", `sub\aux.h`, "COM¹.txt", "conin$", "CONOUT$.x", "COM0", "lpt0.txt",
		"a\x00b", "a\nb", "a\rb", "a\tb", "\x1b[31mred", "a\x7fb", "a\u0085b",
		strings.Repeat("a", 256), strings.Repeat("é", 128),
		"report.pdf\u202Eexe.txt", "a\u200Bb", "a\u2066b", "\uFEFFx", "x\U000E0041",
		"%2e%2e/x", "%2E%2E", "%252e%252e/x", "a%2fb", "a%5C..", "%2e", "a%00b",
		"．．/x", "．", "a／b", "a＼b", "ＣＯＮ.txt",
		"a//b", "a/", `a\`, "...", ". .", "a/ ../b", "x.", "x ",
		"file.txt:stream", "a:b",
		"a\xffb",
	}
	for _, name := range bad {
		p, err := Join(root, name)
		if err == nil {
			t.Errorf("Join(%q) = %q, want an error", name, p)
			continue
		}
		msg := err.Error()
		if strings.Count(msg, "; ") < 1 || strings.Contains(msg, "\n") {
			t.Errorf("Join(%q) error is not one sentence saying what to do: %q", name, msg)
		}
		if f, _, err := Create(root, name); err == nil {
			f.Close()
			t.Errorf("Create(%q) succeeded", name)
		}
	}
	if entries, _ := os.ReadDir(root); len(entries) != 0 {
		t.Errorf("refused names left %d entries in root", len(entries))
	}
}

func TestJoinAccepts(t *testing.T) {
	root := t.TempDir()
	good := map[string]string{
		"report.pdf":             "report.pdf",
		"sub/report.pdf":         "sub/report.pdf",
		`sub\report.pdf`:         "sub/report.pdf",
		".bashrc":                ".bashrc",
		"..foo":                  "..foo",
		"a..b.txt":               "a..b.txt",
		"100% done.pdf":          "100% done.pdf",
		"%41.txt":                "%41.txt", // percent stays literal
		"Рaypal счёт.pdf":        "Рaypal счёт.pdf",
		"会議 資料.docx":             "会議 資料.docx",
		"👍.png":                  "👍.png",
		"COM10.txt":              "COM10.txt",
		"console.log":            "console.log",
		"nullable.go":            "nullable.go",
		" leading space.txt":     " leading space.txt",
		strings.Repeat("a", 255): strings.Repeat("a", 255),
	}
	for name, want := range good {
		got, err := Join(root, name)
		if err != nil {
			t.Errorf("Join(%q): %v", name, err)
			continue
		}
		if got != filepath.Join(root, want) {
			t.Errorf("Join(%q) = %q, want %q", name, got, filepath.Join(root, want))
		}
	}
}

func TestSymlinkOnTheWay(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	if err := os.Symlink(outside, filepath.Join(root, "evil")); err != nil {
		t.Skip("no symlinks here:", err)
	}
	os.WriteFile(filepath.Join(outside, "target"), []byte("precious"), 0o600)
	os.Symlink(filepath.Join(outside, "target"), filepath.Join(root, "link.txt"))
	os.Mkdir(filepath.Join(root, "ok"), 0o700)
	os.Symlink(outside, filepath.Join(root, "ok", "deeper"))
	os.Symlink("ok", filepath.Join(root, "inside")) // a link that stays inside is refused too
	os.WriteFile(filepath.Join(root, "afile"), nil, 0o600)

	for _, name := range []string{"evil/x.txt", "evil/sub/x.txt", "ok/deeper/x", "inside/x", "afile/x", "link.txt"} {
		if p, err := Join(root, name); err == nil {
			t.Errorf("Join(%q) = %q, want refusal", name, p)
		}
	}
	for _, name := range []string{"evil/x.txt", "evil/sub/x.txt", "ok/deeper/x", "inside/x", "afile/x"} {
		if f, p, err := Create(root, name); err == nil {
			f.Close()
			t.Errorf("Create(%q) = %q, want refusal", name, p)
		}
	}
	// A link where the file goes is never written through: Create picks another name.
	f, p, err := Create(root, "link.txt")
	if err != nil {
		t.Fatalf("Create(link.txt): %v", err)
	}
	f.WriteString("new")
	f.Close()
	if filepath.Base(p) != "link (2).txt" {
		t.Errorf("Create next to a link made %q", p)
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "target")); string(b) != "precious" {
		t.Errorf("file outside root changed to %q", b)
	}
	assertEmptyExcept(t, outside, "target")
}

func TestCreateNeverOverwrites(t *testing.T) {
	root := t.TempDir()
	want := []string{"report.pdf", "report (2).pdf", "report (3).pdf"}
	for i, w := range want {
		f, p, err := Create(root, "report.pdf")
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(w)
		f.Close()
		if p != filepath.Join(root, w) {
			t.Errorf("Create #%d = %q, want %q", i+1, p, w)
		}
	}
	for _, w := range want {
		if b, _ := os.ReadFile(filepath.Join(root, w)); string(b) != w {
			t.Errorf("%s holds %q", w, b)
		}
	}
	fi, _ := os.Stat(filepath.Join(root, "report.pdf"))
	if runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600 {
		t.Errorf("file mode %v, want 0600", fi.Mode().Perm())
	}
	for _, c := range [][2]string{{".bashrc", ".bashrc (2)"}, {"noext", "noext (2)"}, {"a.tar.gz", "a.tar (2).gz"}} {
		for i := 0; i < 2; i++ {
			f, p, err := Create(root, c[0])
			if err != nil {
				t.Fatal(err)
			}
			f.Close()
			if i == 1 && filepath.Base(p) != c[1] {
				t.Errorf("second %q became %q, want %q", c[0], filepath.Base(p), c[1])
			}
		}
	}
	long := strings.Repeat("é", 125) + ".pdf" // 254 bytes
	for i := 0; i < 3; i++ {
		f, p, err := Create(root, long)
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
		if len(filepath.Base(p)) > MaxName || !strings.HasSuffix(p, ".pdf") {
			t.Errorf("long name became %q (%d bytes)", filepath.Base(p), len(filepath.Base(p)))
		}
	}
}

func TestCreateFolders(t *testing.T) {
	root := t.TempDir()
	f, p, err := Create(root, `inbox\2024/invoice.pdf`)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if p != filepath.Join(root, "inbox", "2024", "invoice.pdf") {
		t.Errorf("Create made %q", p)
	}
	fi, _ := os.Stat(filepath.Join(root, "inbox"))
	if runtime.GOOS != "windows" && fi.Mode().Perm() != 0o700 {
		t.Errorf("folder mode %v, want 0700", fi.Mode().Perm())
	}
	if _, _, err := Create(filepath.Join(root, "missing"), "x"); err == nil {
		t.Error("Create in a missing root succeeded")
	}
}

// TestCreateRace swaps a link to a folder outside root in and out of the
// chain while Create runs: nothing may ever be written outside.
func TestCreateRace(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	sub := filepath.Join(root, "sub")
	if err := os.Symlink(outside, sub); err != nil {
		t.Skip("no symlinks here:", err)
	}
	os.Remove(sub)
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for n := 0; !stop.Load(); n++ {
			// Move whatever sub is (a folder Create made) aside, inside root,
			// put a link to outside in its place, then take it away again.
			os.Rename(sub, filepath.Join(root, fmt.Sprintf("stash%d", n)))
			os.Symlink(outside, sub)
			time.Sleep(time.Duration(n%3) * 20 * time.Microsecond)
			os.Remove(sub)
			time.Sleep(time.Duration(n%5) * 20 * time.Microsecond)
		}
	}()
	created, refused := 0, 0
	for i := 0; i < 2000; i++ {
		f, p, err := Create(root, "sub/f.txt")
		if err != nil {
			refused++
			continue
		}
		created++
		f.WriteString("x")
		f.Close()
		if !strings.HasPrefix(p, root+string(filepath.Separator)) {
			t.Errorf("Create returned %q outside root", p)
		}
	}
	stop.Store(true)
	wg.Wait()
	assertEmptyExcept(t, outside)
	if refused == 0 || created == 0 {
		t.Errorf("%d created, %d refused: Create never met both the link and the folder, so the race was not exercised", created, refused)
	}
	t.Logf("while sub was swapped: %d created inside root, %d refused, 0 outside", created, refused)
}

func assertEmptyExcept(t *testing.T, dir string, keep ...string) {
	t.Helper()
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if p == dir || err != nil {
			return nil
		}
		for _, k := range keep {
			if d.Name() == k {
				return nil
			}
		}
		t.Errorf("found %s outside root", p)
		return nil
	})
}

// FuzzJoin: whatever the name, a joined path stays under root and holds no
// component that climbs.
func FuzzJoin(f *testing.F) {
	for _, s := range []string{"report.pdf", "../x", `..\x`, "%2e%2e/x", "a/b", "CON.txt", "．．/x", `\\s\x`} {
		f.Add(s)
	}
	root := f.TempDir()
	f.Fuzz(func(t *testing.T, name string) {
		p, err := Join(root, name)
		if err != nil {
			return
		}
		rel, rerr := filepath.Rel(root, p)
		if rerr != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
			t.Fatalf("Join(%q) = %q escapes %q", name, p, root)
		}
		for _, c := range strings.Split(rel, string(filepath.Separator)) {
			if c == "" || c == "." || c == ".." || strings.ContainsAny(c, ":\x00") {
				t.Fatalf("Join(%q) = %q has component %q", name, p, c)
			}
		}
	})
}
