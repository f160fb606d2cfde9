package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/postern-mcp/postern/generated"
)

// withNotes adds a notes folder holding notes (relative path → text) to the configuration cfg
// and returns the folder. Its notes' ids start with "Notes/".
func withNotes(t *testing.T, cfg string, notes map[string]string) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "Notes")
	for rel, text := range notes {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	os.MkdirAll(root, 0o700)
	f, err := os.OpenFile(cfg, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString("\n[notes]\nfolder = \"" + root + "\"\n"); err != nil {
		t.Fatal(err)
	}
	return root
}

// TestNotesThroughBinary: postern sync indexes the notes folder, and through the real binary
// over stdio a note is found, read framed and masked, and added; a note of a changed folder is
// found without a sync, as every notes call looks at the folder first.
func TestNotesThroughBinary(t *testing.T) {
	env, cfg := mailHome(t, 5)
	root := withNotes(t, cfg, map[string]string{
		"plan.md":         "# Plan for the move\n\nBoxes on Friday.\n",
		"bank/code.md":    "# Bank\n\nYour code is 482913.\n",
		".hidden/skip.md": "# Hidden\n",
		"shed.md": "# Shed\n\nWifi password for the shed: hunter2-shed\nPIN 4821 for the card\n\nRecovery codes:\n4829-1376\n7103-9524\n\n" +
			"-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n-----END OPENSSH PRIVATE KEY-----\n\n" +
			"Shopping list:\n- sourdough bread\n- basil\n",
	})
	out, errOut, code := runCLI(t, env, "sync", "--config", cfg)
	if code != 0 || !strings.Contains(out, "notes: 3 notes (3 new, 0 changed, 0 removed)") {
		t.Fatalf("sync: %d %q %q", code, out, errOut)
	}
	s := startEnv(t, env, "--scopes", "read,read:bodies,notes:write", "--config", cfg)
	s.initialize("2025-11-25")
	call := func(id int, name string, args map[string]any) (map[string]any, string) {
		t.Helper()
		r := result(t, s.rpc(id, "tools/call", map[string]any{"name": name, "arguments": args}))
		text := callText(r)
		if r["isError"] != false {
			t.Fatalf("%s %v: %s", name, args, text)
		}
		checkAnswer(t, name, text)
		return r["structuredContent"].(map[string]any), text
	}
	sc, _ := call(1, generated.ToolNotesFind, map[string]any{"query": "move"})
	if got := sc["notes"].([]any); len(got) != 1 || got[0].(map[string]any)["path"] != "Notes/plan.md" {
		t.Fatalf("notes_find: %v", sc)
	}
	sc, text := call(2, generated.ToolNoteRead, map[string]any{"id": "Notes/bank/code.md"})
	if strings.Contains(text, "482913") || !strings.Contains(sc["text"].(string), "Your code is") {
		t.Fatalf("note_read: %s", text)
	}
	if sc, _ := call(3, generated.ToolNotesFind, map[string]any{"query": "482913"}); len(sc["notes"].([]any)) != 0 {
		t.Fatalf("a masked code's digits found a note: %v", sc)
	}
	os.WriteFile(filepath.Join(root, "new.md"), []byte("# Written by hand\n\nquince jam\n"), 0o600)
	if sc, _ := call(4, generated.ToolNotesFind, map[string]any{"query": "quince"}); len(sc["notes"].([]any)) != 1 {
		t.Fatalf("a note written since the sync was not found: %v", sc)
	}
	sc, _ = call(5, generated.ToolNoteAdd, map[string]any{"title": "Plan for the move", "text": "A second plan."})
	if sc["path"] != "Notes/Plan for the move.md" {
		t.Fatalf("note_add: %v", sc)
	}
	sc, _ = call(6, generated.ToolNoteAdd, map[string]any{"title": "Plan for the move", "text": "A third plan."})
	if sc["path"] != "Notes/Plan for the move (2).md" {
		t.Fatalf("note_add again: %v", sc)
	}
	if sc, _ := call(7, generated.ToolNotesFind, map[string]any{"query": "plan"}); len(sc["notes"].([]any)) != 3 {
		t.Fatalf("after two adds: %v", sc)
	}
	// A note of secrets beside a shopping list: the list is read and found, no secret is.
	sc, text = call(8, generated.ToolNoteRead, map[string]any{"id": "Notes/shed.md"})
	for _, sec := range []string{"hunter2", "4821", "4829", "1376", "7103", "b3BlbnNzaC1rZXkt"} {
		if strings.Contains(text, sec) {
			t.Errorf("note_read shows %q: %s", sec, text)
		}
	}
	if !strings.Contains(sc["text"].(string), "- sourdough bread") || strings.Contains(text, "withholds") {
		t.Errorf("note_read lost the shopping list: %s", text)
	}
	for i, q := range []string{"hunter2", "hunt", "4821", "482", "48291376", "７１０３", "b3BlbnNzaC1"} {
		if sc, _ := call(9+i, generated.ToolNotesFind, map[string]any{"query": q}); len(sc["notes"].([]any)) != 0 {
			t.Errorf("notes_find %q finds %v", q, sc["notes"])
		}
	}
	if sc, _ := call(20, generated.ToolNotesFind, map[string]any{"query": "sourdough"}); len(sc["notes"].([]any)) != 1 {
		t.Errorf("the shopping list is not found: %v", sc)
	}
}
