package tools

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"github.com/postern-mcp/postern/internal/tools/core"
	"github.com/postern-mcp/postern/internal/tools/mail"
	"net/url"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/answer"
	"github.com/postern-mcp/postern/internal/dispatch"
	"github.com/postern-mcp/postern/internal/mcp"
	"github.com/postern-mcp/postern/internal/store"
	"github.com/postern-mcp/postern/internal/tools/view"
)

// The resources are the catalog's templates (catalog/server.yaml). Each but docs is read
// through the handler of the tool that gives the same thing (mail_show, mail_thread, agenda,
// note_read), decoded from the tool's own defaults and rendered by package answer exactly as
// dispatch renders the tool's answer, so that a resource's text is the tool's text: the same
// masks, frames, refusals and (through the handlers) visibility. A refusal or a missing thing
// is mcp.ErrNotFound carrying the tool's one sentence, the same for a thing that is not there
// and one this connection may not see.

// maxLinks is the most resource links one answer carries.
const maxLinks = 20

// today is the {day} of the agenda resource that means the person's today.
const today = "today"

// resourceRef is a URI read against the catalog: its template and its one variable.
type resourceRef struct {
	spec  generated.ResourceSpec
	value string
}

// parseURI finds the template uri expands; ok is false for any URI none expands.
func parseURI(uri string) (resourceRef, bool) {
	for _, r := range generated.Resources {
		prefix, rest, _ := strings.Cut(r.URITemplate, "{")
		_, suffix, _ := strings.Cut(rest, "}")
		v, found := strings.CutPrefix(uri, prefix)
		if !found {
			continue
		}
		v, found = strings.CutSuffix(v, suffix)
		if !found || v == "" {
			continue
		}
		if r.Name == generated.ResourceNote {
			// {path} expanded by RFC 6570 has its slashes encoded; a client may also send them bare.
			p, err := url.PathUnescape(v)
			if err != nil || p == "" {
				return resourceRef{}, false
			}
			v = p
		} else if strings.ContainsAny(v, "/?#%") {
			return resourceRef{}, false
		}
		return resourceRef{r, v}, true
	}
	return resourceRef{}, false
}

// uriFor expands spec's template with v.
func uriFor(spec generated.ResourceSpec, v string) string {
	if spec.Name == generated.ResourceNote {
		v = url.PathEscape(v)
	}
	prefix, rest, _ := strings.Cut(spec.URITemplate, "{")
	_, suffix, _ := strings.Cut(rest, "}")
	return prefix + v + suffix
}

func resourceSpec(name string) (generated.ResourceSpec, bool) {
	for _, r := range generated.Resources {
		if r.Name == name {
			return r, true
		}
	}
	return generated.ResourceSpec{}, false
}

func toolSpec(name string) *generated.ToolSpec {
	for i := range generated.Tools {
		if generated.Tools[i].Name == name {
			return &generated.Tools[i]
		}
	}
	return nil
}

// notFound is the refusal of a read: mcp.ErrNotFound with the sentence the agent reads.
func notFound(sentence string) error { return &mcp.NotFoundError{Sentence: sentence} }

// scopeRefusal is the sentence for a resource whose scope this connection was not granted;
// it is the same for every URI of the template, so it says nothing about the thing.
func scopeRefusal(spec generated.ResourceSpec) string {
	return answer.Sentence(fmt.Sprintf("the resource %s needs the scope %q, which this connection was not granted; ask the person to grant it if they want you to read it", spec.URITemplate, spec.Scope))
}

// List implements mcp.Resources: every docs page, and today's agenda when a calendar is synced.
func (s *Service) List(ctx context.Context, g dispatch.Grant) []mcp.Resource {
	ctx = s.OpenView(ctx) // not a tool: it opens its own view
	var out []mcp.Resource
	if r, ok := resourceSpec(generated.ResourceDocs); ok && g[r.Scope] {
		for _, p := range generated.DocPages {
			out = append(out, mcp.Resource{
				URI: uriFor(r, p.Name), Name: p.Name,
				Title: p.Title, Description: r.Description, MimeType: r.MimeType,
			})
		}
	}
	// The server lists at every Poll: a store no sync made yet is not created by a look.
	if r, ok := resourceSpec(generated.ResourceAgenda); ok && g[r.Scope] && s.storeExists(ctx) {
		if _, cs, err := s.Calendars.Collections(ctx, store.KindCalendar, store.KindTasks); err == nil && len(cs) > 0 {
			out = append(out, mcp.Resource{URI: uriFor(r, today), Name: "agenda-" + today, Title: "Today's agenda", Description: r.Description, MimeType: r.MimeType})
		}
	}
	return out
}

// Read implements mcp.Resources.
func (s *Service) Read(ctx context.Context, uri string, g dispatch.Grant) (mcp.Contents, error) {
	ctx = s.OpenView(ctx) // not a tool: it opens its own view
	ref, ok := parseURI(uri)
	if !ok {
		return mcp.Contents{}, mcp.ErrNotFound
	}
	if !g[ref.spec.Scope] {
		return mcp.Contents{}, notFound(scopeRefusal(ref.spec))
	}
	var text string
	var err error
	switch ref.spec.Name {
	case generated.ResourceDocs:
		_, t, found := core.Page(ref.value)
		if !found {
			return mcp.Contents{}, notFound(answer.Sentence(fmt.Sprintf("there is no page %q; the pages are %s", ref.value, core.PageNames())))
		}
		return mcp.Contents{URI: uri, MimeType: ref.spec.MimeType, Text: t}, nil
	case generated.ResourceMessage:
		text, err = s.viaTool(ctx, generated.ToolMailShow, map[string]any{"id": ref.value})
	case generated.ResourceThread:
		text, err = s.viaTool(ctx, generated.ToolMailThread, map[string]any{"id": s.threadMember(ctx, ref.value)})
	case generated.ResourceAgenda:
		day, derr := s.agendaDay(ref.value)
		if derr != nil {
			return mcp.Contents{}, notFound(answer.Error(derr))
		}
		text, err = s.viaTool(ctx, generated.ToolAgenda, map[string]any{"from": day, "to": day})
	case generated.ResourceNote:
		text, err = s.noteResource(ctx, ref.value) // resource_notes*.go
		if err != nil {
			err = notFound(answer.Error(err))
		}
	default:
		return mcp.Contents{}, mcp.ErrNotFound
	}
	if err != nil {
		return mcp.Contents{}, err
	}
	return mcp.Contents{URI: uri, MimeType: ref.spec.MimeType, Text: text}, nil
}

// viaTool runs tool's handler on args (the tool's defaults for the rest) and renders its
// answer as dispatch renders the tool's: the text an agent calling the tool would read.
func (s *Service) viaTool(ctx context.Context, tool string, args map[string]any) (string, error) {
	spec := toolSpec(tool)
	if spec == nil {
		return "", mcp.ErrNotFound
	}
	raw, err := json.Marshal(args)
	if err != nil {
		return "", notFound(answer.Error(err))
	}
	out, err := spec.Call(ctx, s, raw)
	if err != nil {
		return "", notFound(answer.Error(err))
	}
	b, text, err := answer.Encode(out)
	if err != nil {
		return "", notFound(answer.Sentence("the answer could not be encoded: " + err.Error()))
	}
	if refusal := answer.TooLong(tool, b, text); refusal != "" {
		return "", notFound(refusal)
	}
	return text, nil
}

// threadMember returns the id of a visible message of thread id (the thread field of a row,
// which is the id of its oldest message when that one is still here), or id itself: mail_thread
// then reads it as a message id, or refuses it with its own sentence.
func (s *Service) threadMember(ctx context.Context, id string) string {
	n, ok := store.DecodeID(id)
	if !ok {
		return id
	}
	accts, err := s.visibleNames(ctx)
	if err != nil {
		return id
	}
	st, err := s.store(ctx)
	if err != nil {
		return id
	}
	rows, err := st.Thread(ctx, n, accts)
	if err != nil || len(rows) == 0 {
		return id
	}
	return store.EncodeID(rows[0].ID)
}

// agendaDay is {day} as the agenda tool's from and to: today in the person's zone, or a date.
func (s *Service) agendaDay(v string) (string, error) {
	if v == today {
		return time.Now().In(s.Calendars.PersonZone()).Format(time.DateOnly), nil
	}
	if _, err := time.Parse(time.DateOnly, v); err != nil {
		return "", fmt.Errorf("%q is not a day; use today or a date such as 2026-03-31", v)
	}
	return v, nil
}

// Digest implements mcp.Resources: a short string that changes when what Read gives for uri
// changes (but for the fresh marks of each answer), and "" while it cannot be read. It runs
// the same handlers as Read, so a thing this connection may not see has the digest of a thing
// that is not there. A message's digest is its row (flags, folder): its text never changes.
func (s *Service) Digest(ctx context.Context, uri string, g dispatch.Grant) string {
	ctx = s.OpenView(ctx) // not a tool: it opens its own view
	ref, ok := parseURI(uri)
	if !ok || !g[ref.spec.Scope] {
		return ""
	}
	var v any
	switch ref.spec.Name {
	case generated.ResourceDocs:
		_, t, found := core.Page(ref.value)
		if !found {
			return ""
		}
		v = t
	case generated.ResourceMessage:
		_, r, err := s.Mail.Message(ctx, ref.value)
		if err != nil {
			return ""
		}
		v = []any{r.Folder, r.Flags, r.Forged, r.Withheld, mail.MessageRow(r, nil)}
	case generated.ResourceThread:
		res, err := s.MailThread(ctx, &generated.MailThreadArgs{ID: s.threadMember(ctx, ref.value)})
		if err != nil {
			return ""
		}
		res.SyncedAt = "" // a sync that brought nothing new changes no thread
		v = res
	case generated.ResourceAgenda:
		day, err := s.agendaDay(ref.value)
		if err != nil {
			return ""
		}
		res, err := s.Agenda(ctx, &generated.AgendaArgs{From: &day, To: &day})
		if err != nil {
			return ""
		}
		v = res
	case generated.ResourceNote:
		d, err := s.noteDigest(ctx, ref.value) // resource_notes*.go
		if err != nil {
			return ""
		}
		v = d
	default:
		return ""
	}
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(b)
	return ref.spec.Name + ":" + hex.EncodeToString(sum[:12])
}

// Links implements mcp.Resources: the resources an answer names, in the order it names them,
// at most maxLinks: each message id (the "id" of a row) as a message, each "thread" as a thread,
// and each note path (noteLinks) as a note, for the templates g allows.
func (s *Service) Links(tool string, structured []byte, g dispatch.Grant) []mcp.Resource {
	if len(structured) == 0 || !gjson.ValidBytes(structured) {
		return nil
	}
	msg, okMsg := resourceSpec(generated.ResourceMessage)
	thr, okThr := resourceSpec(generated.ResourceThread)
	okMsg, okThr = okMsg && g[msg.Scope], okThr && g[thr.Scope]
	var out []mcp.Resource
	seen := map[string]bool{}
	add := func(spec generated.ResourceSpec, v string) {
		uri := uriFor(spec, v)
		if len(out) < maxLinks && !seen[uri] {
			seen[uri] = true
			out = append(out, mcp.Resource{URI: uri, Name: v, Title: spec.Title, MimeType: spec.MimeType})
		}
	}
	var walk func(v gjson.Result)
	walk = func(v gjson.Result) {
		if len(out) >= maxLinks {
			return
		}
		switch {
		case v.IsArray():
			for _, x := range v.Array() {
				walk(x)
			}
		case v.IsObject():
			v.ForEach(func(k, x gjson.Result) bool {
				if x.Type == gjson.String {
					if _, isMsg := store.DecodeID(x.Str); isMsg {
						switch {
						case k.Str == "id" && okMsg:
							add(msg, x.Str)
						case k.Str == "thread" && okThr:
							add(thr, x.Str)
						}
					}
				} else {
					walk(x)
				}
				return len(out) < maxLinks
			})
		}
	}
	walk(gjson.ParseBytes(structured))
	if note, ok := resourceSpec(generated.ResourceNote); ok && g[note.Scope] {
		for _, p := range s.noteLinks(tool, structured) {
			add(note, p)
		}
	}
	return out
}

// storeExists says whether the store is open or its file is there.
func (s *Service) storeExists(ctx context.Context) bool {
	v, err := view.From(ctx)
	return err == nil && v.StoreExists()
}
