// Package attachments serves the tools of catalog/mail_attachments.yaml: an attachment's
// text (mail_attachment_text) and saving one to the save folder (mail_attachment_save).
package attachments

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/clean"
	"github.com/postern-mcp/postern/internal/config"
	"github.com/postern-mcp/postern/internal/mailparse"
	"github.com/postern-mcp/postern/internal/mask"
	"github.com/postern-mcp/postern/internal/pathsafe"
	"github.com/postern-mcp/postern/internal/source"
	"github.com/postern-mcp/postern/internal/source/kinds"
	"github.com/postern-mcp/postern/internal/store"
	"github.com/postern-mcp/postern/internal/tools/kit"
)

// What the attachment tools read of one attachment.
// Attachments implements generated.MailAttachmentsHandlers.
type Attachments struct {
	*kit.Kit
	// FindMessage finds a message the call may see by its id (the mail domain's), with the store.
	FindMessage func(ctx context.Context, id string) (*store.Store, *store.Row, error)
}

var _ generated.MailAttachmentsHandlers = (*Attachments)(nil)

const (
	// maxSaveBytes is the largest attachment mail_attachment_save writes (a Maildir file is
	// read up to 64 MiB anyway).
	maxSaveBytes = 64 << 20
	// maxTextInput is how much of an attachment mail_attachment_text reads: as much HTML as
	// a message's body may hold; its text is then cut at mailparse.MaxText.
	maxTextInput = 4 << 20
	// maxDirBytes is the longest dir accepted, so that a file name of at least 32 bytes
	// still fits pathsafe's 255 bytes for dir/name.
	maxDirBytes = pathsafe.MaxName - 1 - 32
)

// found is a message's attachment n as the store lists it: the row, and the attachment's
// stored (masked) name and type; att is nil when the message has no attachment n.
type found struct {
	st  *store.Store
	row *store.Row
	att *store.Attachment
}

// findAttachment looks up attachment n (from 1) of message id in the store.
func (s *Attachments) findAttachment(ctx context.Context, id string, n int) (*found, error) {
	st, r, err := s.FindMessage(ctx, id)
	if err != nil {
		return nil, err
	}
	f := &found{st: st, row: r}
	if n >= 1 && n <= len(r.Attachments) {
		f.att = &r.Attachments[n-1]
	}
	return f, nil
}

// noAttachment says that a message has no attachment n.
func noAttachment(n, count int) string {
	switch count {
	case 0:
		return "the message has no attachments"
	case 1:
		return fmt.Sprintf("the message has one attachment, so there is no attachment %d; give n 1", n)
	}
	return fmt.Sprintf("the message has %d attachments, so there is no attachment %d; give n from 1 to %d", count, n, count)
}

// content reads attachment n of the message back from its account (the store keeps no
// attachment content) and checks that the message there is the one the store lists.
func (s *Attachments) content(ctx context.Context, f *found, n int, limit int64) (*mailparse.Part, error) {
	accts, err := s.Visible(ctx)
	if err != nil {
		return nil, err
	}
	var acct *config.Account
	for i := range accts {
		if accts[i].Name == f.row.Account {
			acct = &accts[i]
		}
	}
	if acct == nil {
		return nil, errors.New("there is no such message here; use an id from " + generated.ToolMailList + " or " + generated.ToolMailSearch)
	}
	src, err := kinds.Open(*acct)
	if err != nil {
		return nil, err
	}
	rd, ok := src.(source.Reader)
	if !ok {
		return nil, fmt.Errorf("postern cannot read messages back from account %s (kind %s), so it cannot open their attachments", acct.Name, acct.Kind)
	}
	raw, err := rd.Raw(ctx, f.st, f.row.Folder, f.row.UID)
	var re *source.ReadError
	switch {
	case errors.As(err, &re):
		return nil, fmt.Errorf("cannot read the message from account %s (%v); try again", acct.Name, re.Err)
	case errors.Is(err, source.ErrGone):
		return nil, errors.New("the message is no longer where it was synced; sync and look again")
	case errors.Is(err, source.ErrEmpty):
		return nil, errors.New("the server sent no content for the message; try again")
	case err != nil:
		return nil, err
	}
	m, part, err := mailparse.ReadAttachment(bytes.NewReader(raw), n-1, limit)
	if err != nil {
		return nil, err
	}
	changed := errors.New("the message found where it was synced is not the one postern listed; sync and look again")
	if part == nil || len(m.Attachments) != len(f.row.Attachments) || mask.Line(part.ContentType) != f.att.ContentType ||
		(f.row.MessageID != "" && m.MessageID != f.row.MessageID) {
		return nil, changed
	}
	return part, nil
}

// MailAttachmentText implements mail_attachment_text: a page of the text of a text-like
// attachment, masked as a body is when it is stored (mask.BodyOf, with the message's subject),
// then framed and masked again at the answer boundary (its format is body).
func (s *Attachments) MailAttachmentText(ctx context.Context, a *generated.MailAttachmentTextArgs) (*generated.AttachmentText, error) {
	f, err := s.findAttachment(ctx, a.ID, a.N)
	if err != nil {
		return nil, err
	}
	res := &generated.AttachmentText{ID: a.ID, N: a.N, Attachments: len(f.row.Attachments)}
	if f.att == nil {
		res.Unavailable = noAttachment(a.N, len(f.row.Attachments))
		return res, nil
	}
	res.Name, res.Type = f.att.Name, f.att.ContentType
	if why := textUnavailable(f.att.ContentType); why != "" {
		res.Unavailable = why
		return res, nil
	}
	if f.row.Withheld != "" {
		res.Unavailable = "postern withholds the text of this message and of its attachments: " + f.row.Withheld + "; the person can read them in their mail program"
		return res, nil
	}
	part, err := s.content(ctx, f, a.N, maxTextInput)
	if err != nil {
		return nil, err
	}
	text, cut := part.Text()
	text = clean.Text(text)
	v := mask.Inspect(f.row.Subject, text)
	if v.Withheld {
		res.Unavailable = "postern withholds this attachment's text: " + v.Reason + "; the person can read it in their mail program"
		return res, nil
	}
	text = mask.BodyOf(text, v)
	p, err := kit.TextPage(text, "attachment", a.Offset, a.MaxLength, cut)
	if err != nil {
		return nil, err
	}
	res.Text, res.NextOffset, res.Length, res.Truncated = p.Text, p.Next, p.Length, p.Truncated
	return res, nil
}

// textUnavailable says why an attachment of content type ctype gives no text, or "".
func textUnavailable(ctype string) string {
	switch {
	case mailparse.TextLike(ctype):
		return ""
	case ctype == "application/pdf":
		// No maintained pure-Go library extracts PDF text (docs/design.md, "Attachments").
		return "postern cannot read the text of PDF files: no maintained PDF text reader written in Go is available to it; " + generated.ToolMailAttachmentSave + " saves the file for the person to open"
	}
	return "postern reads the text of text, HTML, calendar and attached-message attachments only, not of " + ctype + "; " + generated.ToolMailAttachmentSave + " saves the file for the person to open"
}

// MailAttachmentSave implements mail_attachment_save: attachment n written, with a cleaned
// name, into the save folder (or dir below it) through pathsafe, which never follows a link
// (not even one swapped in during the save) and never overwrites a file.
func (s *Attachments) MailAttachmentSave(ctx context.Context, a *generated.MailAttachmentSaveArgs) (*generated.SavedAttachment, error) {
	cfg, err := s.Config.Get()
	if err != nil {
		return nil, err
	}
	root, isDefault, err := config.SaveFolder(s.SaveDir, cfg.SaveDir)
	if err != nil {
		return nil, err
	}
	dir, err := saveSubdir(root, kit.Deref(a.Dir))
	if err != nil {
		return nil, err
	}
	f, err := s.findAttachment(ctx, a.ID, a.N)
	if err != nil {
		return nil, err
	}
	res := &generated.SavedAttachment{ID: a.ID, N: a.N, Attachments: len(f.row.Attachments)}
	if f.att == nil {
		res.NotSaved = noAttachment(a.N, len(f.row.Attachments))
		return res, nil
	}
	res.Type = f.att.ContentType
	part, err := s.content(ctx, f, a.N, maxSaveBytes)
	if err != nil {
		return nil, err
	}
	if part.Truncated {
		return nil, fmt.Errorf("attachment %d is %d bytes, more than the %d MiB postern saves; the person can save it from their mail program", a.N, part.Size, maxSaveBytes>>20)
	}
	if isDefault {
		// The download folder is the person's already; a new account may not have made it yet.
		if err := os.MkdirAll(root, 0o700); err != nil {
			return nil, fmt.Errorf("cannot create the download folder %s (%v); create it, or set save_dir in the configuration", root, err)
		}
	} else if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("the save folder %s does not exist; the person creates it or sets another (save_dir in the configuration, or postern mcp --save-dir)", root)
	}
	limit := pathsafe.MaxName
	if dir != "" {
		limit -= len(dir) + 1
	}
	name := cleanFileName(part.Name, part.ContentType, a.N, limit)
	if _, err := pathsafe.Join(root, kit.JoinRel(dir, name)); err != nil {
		// Should pathsafe still refuse the cleaned name, it takes the plain one.
		if plain := fallbackName(part.ContentType, a.N); plain != name {
			if _, err := pathsafe.Join(root, kit.JoinRel(dir, plain)); err == nil {
				name = plain
			}
		}
	}
	file, final, err := pathsafe.Create(root, kit.JoinRel(dir, name))
	if err != nil {
		return nil, fmt.Errorf("cannot save the attachment: %s", strings.TrimPrefix(err.Error(), "pathsafe: "))
	}
	_, werr := file.Write(part.Data)
	if cerr := file.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		os.Remove(final)
		return nil, fmt.Errorf("writing %s failed (%v), so it was removed; check the free space and try again", final, werr)
	}
	res.Path, res.Bytes = final, kit.Ptr(len(part.Data))
	if filepath.Base(final) != part.Name {
		res.NameSent = part.Name
	}
	return res, nil
}

// saveSubdir checks dir, a folder below root that the agent named, and returns it with "/"
// between its components ("" for root itself). It must exist and be reached without a link;
// hidden folders are refused as the save folder is.
func saveSubdir(root, dir string) (string, error) {
	if dir == "" {
		return "", nil
	}
	if len(dir) > maxDirBytes {
		return "", fmt.Errorf("dir is %d bytes long; give a folder of at most %d bytes below the save folder", len(dir), maxDirBytes)
	}
	p, err := pathsafe.Join(root, dir)
	if err != nil {
		return "", fmt.Errorf("dir %q is refused: %s", dir, strings.TrimPrefix(err.Error(), "pathsafe: "))
	}
	parts := strings.FieldsFunc(dir, func(r rune) bool { return r == '/' || r == '\\' })
	for _, c := range parts {
		if strings.HasPrefix(c, ".") {
			return "", fmt.Errorf("dir %q names the hidden folder %q, where programs keep their settings; give a visible folder below the save folder", dir, c)
		}
	}
	fi, err := os.Lstat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("dir %q does not exist in the save folder; give an existing folder below it, or leave dir out", dir)
	case err != nil:
		return "", fmt.Errorf("dir %q cannot be used (%v); give another folder or leave dir out", dir, err)
	case !fi.IsDir():
		return "", fmt.Errorf("dir %q is not a folder; give an existing folder below the save folder, or leave dir out", dir)
	}
	return strings.Join(parts, "/"), nil
}

// cleanFileName makes the name a sender gave an attachment a plain file name of at most limit
// bytes that pathsafe accepts: control characters (NUL, CR, LF…) and invisible ones (bidi
// controls, zero-width characters) out, white space runs as one space, separators and the
// characters Windows reserves (/ \ : * ? " < > |, and what reads as them) as "_", no dot or
// space at either end (no hidden file), a Windows device name (CON, NUL, COM1…) behind "_",
// percent signs as "_" when the name would decode to something else, and a long name cut at a
// character's edge keeping its extension. An empty name becomes attachment-N with the
// extension of its type; an attached message without an extension gets ".eml".
func cleanFileName(sent, ctype string, n, limit int) string {
	var b strings.Builder
	for _, r := range strings.ToValidUTF8(sent, "\uFFFD") {
		switch {
		case r == '\t' || r == '\n' || r == '\r' || unicode.IsSpace(r):
			b.WriteByte(' ')
		case r == utf8.RuneError || unicode.IsControl(r) || clean.Forbidden(r):
			// dropped
		case strings.ContainsRune(reservedChars, r):
			b.WriteByte('_')
		default:
			if k := norm.NFKC.String(string(r)); k != string(r) && strings.ContainsAny(k, reservedChars+".") {
				b.WriteByte('_') // a full-width slash or dot, a ligature holding one
				continue
			}
			b.WriteRune(r)
		}
	}
	name := strings.Trim(strings.Join(strings.Fields(b.String()), " "), " .")
	if u, err := url.PathUnescape(name); err == nil && u != name {
		name = strings.ReplaceAll(name, "%", "_")
	}
	if strings.Trim(name, "_ .") == "" {
		return fallbackName(ctype, n)
	}
	if (ctype == "message/rfc822" || ctype == "message/global") && filepath.Ext(name) == "" {
		name += ".eml"
	}
	stem, _, _ := strings.Cut(name, ".")
	if kit.DeviceNames[strings.ToUpper(strings.TrimRight(stem, " "))] {
		name = "_" + name
	}
	if len(name) > limit {
		ext := filepath.Ext(name)
		if len(ext) > 32 || len(ext) >= limit/2 {
			ext = ""
		}
		stem := strings.TrimSuffix(name, ext)
		cut := limit - len(ext)
		for cut > 0 && !utf8.RuneStart(stem[cut]) {
			cut--
		}
		stem = strings.TrimRight(stem[:cut], " .")
		if stem == "" {
			return fallbackName(ctype, n)
		}
		name = stem + ext
	}
	return name
}

// reservedChars are the characters a file name may not hold on some system postern's files
// may be copied to.
const reservedChars = `/\:*?"<>|`

// fallbackName is the name of an attachment whose own is empty or unusable.
func fallbackName(ctype string, n int) string {
	return fmt.Sprintf("attachment-%d", n) + typeExtensions[ctype]
}

// typeExtensions are the extensions of the types mail commonly carries; a fixed table, so that
// a name does not depend on the machine's MIME database.
var typeExtensions = map[string]string{
	"text/plain": ".txt", "text/html": ".html", "text/calendar": ".ics", "text/csv": ".csv",
	"text/markdown": ".md", "text/xml": ".xml", "text/vcard": ".vcf", "text/x-vcard": ".vcf",
	"message/rfc822": ".eml", "message/global": ".eml",
	"application/pdf": ".pdf", "application/zip": ".zip", "application/json": ".json",
	"application/gzip": ".gz", "application/xml": ".xml", "application/ics": ".ics",
	"application/msword": ".doc", "application/vnd.ms-excel": ".xls",
	"application/vnd.openxmlformats-officedocument.wordprocessingml.document":   ".docx",
	"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet":         ".xlsx",
	"application/vnd.openxmlformats-officedocument.presentationml.presentation": ".pptx",
	"application/vnd.oasis.opendocument.text":                                   ".odt", "application/octet-stream": ".bin",
	"image/png": ".png", "image/jpeg": ".jpg", "image/gif": ".gif", "image/webp": ".webp",
	"image/svg+xml": ".svg", "image/heic": ".heic", "image/tiff": ".tif",
	"audio/mpeg": ".mp3", "audio/ogg": ".ogg", "video/mp4": ".mp4",
}
