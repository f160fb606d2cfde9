package projects

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/postern-mcp/postern/internal/store"
)

func TestLoadOne(t *testing.T) {
	path := filepath.Join(t.TempDir(), File)
	if _, _, _, err := LoadOne(path, "acme"); err == nil || !strings.Contains(err.Error(), "there is no projects file") {
		t.Fatalf("no file: %v", err)
	}
	os.WriteFile(path, []byte("[[project]]\nid = \"acme\"\nsenders = [\"a@acme.example\"]\nties = [\"mid:x@y\"]\n"), 0o600)
	_, _, p, err := LoadOne(path, "acme")
	if err != nil || p.ID != "acme" || p.RouteCount() != 1 {
		t.Fatalf("LoadOne = %+v, %v", p, err)
	}
	routes := p.Routes()
	if routes[0].Key != "senders" || routes[len(routes)-1].Key != "ties" || len(routes[len(routes)-1].Values) != 1 {
		t.Fatalf("routes %+v", routes)
	}
	if _, _, _, err := LoadOne(path, "acne"); err == nil || !strings.Contains(err.Error(), "did you mean acme?") {
		t.Fatalf("a misspelt id: %v", err)
	}
}

func TestResolveTie(t *testing.T) {
	storePath := filepath.Join(t.TempDir(), "store.db")
	for ref, want := range map[string]string{
		"mid:<abc@example.com>":   "mid:abc@example.com",
		" note:/clients/plan.md/": "note:clients/plan.md",
		"event: UID-1 ":           "event:UID-1",
	} {
		if tie, from, err := ResolveTie(ref, storePath); err != nil || tie != want || from != "" {
			t.Errorf("ResolveTie(%q) = %q, %q, %v; want %q", ref, tie, from, err, want)
		}
	}
	if _, _, err := ResolveTie("hello", storePath); err == nil || !strings.Contains(err.Error(), "is not something to tie") {
		t.Fatalf("a word: %v", err)
	}
	id := store.EncodeID(42)
	if _, _, err := ResolveTie(id, storePath); err == nil || !strings.Contains(err.Error(), "there is no local store") {
		t.Fatalf("no store: %v", err)
	}
	st, err := store.Open(storePath)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	if _, _, err := ResolveTie(id, storePath); err == nil || !strings.Contains(err.Error(), "there is no message "+id) {
		t.Fatalf("no such message: %v", err)
	}
}
