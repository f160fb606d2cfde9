package corpus

import (
	"bytes"
	"encoding/base64"
	"io"
	"mime"
	"mime/multipart"
	"net/mail"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"testing"
	"time"
)

func TestWriteMaildir(t *testing.T) {
	root := t.TempDir()
	opt := Options{Seed: 11, Messages: 400}
	n, err := WriteMaildir(root, opt)
	if err != nil || n != 400 {
		t.Fatalf("WriteMaildir = %d, %v", n, err)
	}
	subs, err := os.ReadFile(filepath.Join(root, "subscriptions"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "INBOX\nArchive\nSent\nDrafts\nWork.Projects\nNewsletters\n"; string(subs) != want {
		t.Errorf("subscriptions = %q, want %q", subs, want)
	}
	dirs := map[string]string{
		"INBOX": "", "Archive": ".Archive", "Sent": ".Sent", "Drafts": ".Drafts",
		"Work/Projects": ".Work.Projects", "Newsletters": ".Newsletters",
	}
	for _, d := range dirs {
		for _, sub := range []string{"cur", "new", "tmp"} {
			if fi, err := os.Stat(filepath.Join(root, d, sub)); err != nil || !fi.IsDir() {
				t.Fatalf("missing %s/%s: %v", d, sub, err)
			}
		}
	}
	name := regexp.MustCompile(`^(\d+)\.(\d+)\.corpus:2,([A-Z]*)$`)
	want := map[string]int{}
	ms := Generate(opt)
	for _, m := range ms {
		want[m.Folder]++
	}
	for folder, d := range dirs {
		entries, err := os.ReadDir(filepath.Join(root, d, "cur"))
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) != want[folder] {
			t.Errorf("%s holds %d messages, want %d", folder, len(entries), want[folder])
		}
		for _, e := range entries {
			sm := name.FindStringSubmatch(e.Name())
			if sm == nil {
				t.Fatalf("file name %q is not <unix>.<seq>.corpus:2,<flags>", e.Name())
			}
			i, _ := strconv.Atoi(sm[2])
			m := ms[i]
			if m.Folder != folder {
				t.Errorf("message %d in %s, want %s", i, folder, m.Folder)
			}
			if sm[1] != strconv.FormatInt(m.Date.Unix(), 10) {
				t.Errorf("%s: time part, want %d", e.Name(), m.Date.Unix())
			}
			flags := ""
			for _, f := range []struct{ letter, flag string }{{"F", `\Flagged`}, {"R", `\Answered`}, {"S", `\Seen`}} {
				for _, g := range m.Flags {
					if g == f.flag {
						flags += f.letter
					}
				}
			}
			if sm[3] != flags {
				t.Errorf("%s: flags %q, want %q for %v", e.Name(), sm[3], flags, m.Flags)
			}
			p := filepath.Join(root, d, "cur", e.Name())
			fi, err := os.Stat(p)
			if err != nil || !fi.ModTime().Equal(m.Date) {
				t.Errorf("%s: mtime %v, want %v (%v)", e.Name(), fi.ModTime(), m.Date, err)
			}
			if b, err := os.ReadFile(p); err != nil || !bytes.Equal(b, m.Raw) {
				t.Errorf("%s: content differs from Message.Raw (%v)", e.Name(), err)
			}
		}
	}
	if _, err := WriteMaildir(t.TempDir(), Options{Messages: 1, Folders: []string{"INBOX", "a.b"}}); err == nil {
		t.Error("a folder name with '.' was accepted")
	}
}

func TestBigSizes(t *testing.T) {
	for _, size := range []int64{900, 901, 902, 903, 904, 905, 906, 1000, 4096, 65_537, 1<<20 + 3} {
		n, err := io.Copy(io.Discard, Big(size, 5))
		if err != nil || n != size {
			t.Errorf("Big(%d) gave %d bytes (%v)", size, n, err)
		}
	}
	if n, _ := io.Copy(io.Discard, Big(10, 5)); n < 10 || n > 1000 {
		t.Errorf("Big(10) gave %d bytes, want the smallest message", n)
	}
	a, _ := io.ReadAll(Big(10_000, 1))
	b, _ := io.ReadAll(Big(10_000, 1))
	c, _ := io.ReadAll(Big(10_000, 2))
	if !bytes.Equal(a, b) || bytes.Equal(a, c) {
		t.Error("Big is not determined by its seed")
	}
}

func TestBigParses(t *testing.T) {
	const size = 300_000
	_, _, want := bigLayout(size, 9)
	m, err := mail.ReadMessage(Big(size, 9))
	if err != nil {
		t.Fatal(err)
	}
	_, params, err := mime.ParseMediaType(m.Header.Get("Content-Type"))
	if err != nil {
		t.Fatal(err)
	}
	mr := multipart.NewReader(m.Body, params["boundary"])
	var parts []int64
	for {
		p, err := mr.NextRawPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		var r io.Reader = p
		if p.Header.Get("Content-Transfer-Encoding") == "base64" {
			r = base64.NewDecoder(base64.StdEncoding, p)
		}
		n, err := io.Copy(io.Discard, r)
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, n)
	}
	if len(parts) != 2 || parts[1] != want || want < size*7/10 {
		t.Errorf("parts of %v bytes, want text and %d bytes of attachment", parts, want)
	}
}

func TestBigMemory(t *testing.T) {
	const size = 25 << 20
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	n, err := io.Copy(io.Discard, Big(size, 1))
	elapsed := time.Since(start)
	runtime.ReadMemStats(&after)
	if err != nil || n != size {
		t.Fatalf("Big(25 MB) gave %d bytes (%v)", n, err)
	}
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("25 MB in %v, %d bytes allocated", elapsed, alloc)
	if alloc > 256<<10 {
		t.Errorf("streaming 25 MB allocated %d bytes, want well under 256 KB", alloc)
	}
}

// BenchmarkEach100k measures a 100,000-message corpus, the benchmark's size.
func BenchmarkEach100k(b *testing.B) {
	for b.Loop() {
		var bytes int64
		err := Each(Options{Seed: 1, Messages: 100_000}, func(_ int, m *Message) error {
			bytes += int64(len(m.Raw))
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(bytes)/1e6, "MB/corpus")
	}
}
