package tools

import (
	"context"
	"encoding/json"

	"github.com/tidwall/gjson"

	"github.com/postern-mcp/postern/generated"
)

// A note as a resource (postern://note/{path}): read through note_read's handler, so its
// masks, frame and the person's projects are the tool's.

// noteResource returns the note at path as note_read's answer text, or note_read's refusal.
func (s *Service) noteResource(ctx context.Context, path string) (string, error) {
	return s.viaTool(ctx, generated.ToolNoteRead, map[string]any{"id": path})
}

// noteDigest returns a string that changes when the note at path changes, or note_read's
// refusal when it cannot be read (a kept note and a missing one alike).
func (s *Service) noteDigest(ctx context.Context, path string) (string, error) {
	res, err := s.NoteRead(ctx, &generated.NoteReadArgs{ID: path})
	if err != nil {
		return "", err
	}
	b, err := json.Marshal(res)
	return string(b), err
}

// noteLinks returns the note paths a tool's structured answer names, for resource links.
func (s *Service) noteLinks(tool string, structured []byte) []string {
	var out []string
	switch tool {
	case generated.ToolNotesFind:
		for _, p := range gjson.GetBytes(structured, "notes.#.path").Array() {
			out = append(out, p.String())
		}
	case generated.ToolNoteRead:
		if p := gjson.GetBytes(structured, "note.path"); p.Type == gjson.String {
			out = append(out, p.String())
		}
	case generated.ToolNoteAdd:
		if p := gjson.GetBytes(structured, "path"); p.Type == gjson.String {
			out = append(out, p.String())
		}
	}
	return out
}
