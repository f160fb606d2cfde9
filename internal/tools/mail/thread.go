package mail

import (
	"context"
	"fmt"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/mailparse"
	"github.com/postern-mcp/postern/internal/store"
	"github.com/postern-mcp/postern/internal/tools/kit"
)

// threadText answers mail_thread with text: every message of the thread
// with its own new text (mailparse.StripReply), oldest first, a page at a
// time. The texts are read as one run, each message's after the one before;
// offset and next_offset count bytes of that run, and a page holds at most
// max_length bytes of rows and texts. A message whose text a page cuts is
// on both pages, with cut on the first and continued on the next. The texts
// are the store's (masked as the boundary shows them); the boundary frames
// each one.
func (s *Mail) threadText(ctx context.Context, st *store.Store, thread int64, rows []*store.Row, v rowView, a *generated.MailThreadArgs) (*generated.Thread, error) {
	type part struct {
		row    *store.Row
		reply  mailparse.Reply
		at     int // where its text starts in the run
		hidden bool
	}
	parts := make([]part, 0, len(rows))
	total := 0
	for _, r := range rows {
		p := part{row: r, at: total}
		if r.Withheld != "" {
			p.reply.Text = "[postern withholds this message's text: " + r.Withheld + ". The person can read it in their mail program.]"
			p.hidden = true
		} else {
			b, err := st.Body(ctx, r.ID)
			if err != nil {
				return nil, err
			}
			p.reply = mailparse.StripReply(b.Text)
		}
		total += len(p.reply.Text)
		parts = append(parts, p)
	}
	if a.Offset > total {
		return nil, fmt.Errorf("offset %d is past the end of this thread's text (%d bytes); start again at 0", a.Offset, total)
	}

	res := &generated.Thread{Thread: store.EncodeID(thread), Texts: []generated.ThreadText{}}
	left := kit.PageLength(a.MaxLength)
	next := -1
	for _, p := range parts {
		n := len(p.reply.Text)
		if p.at+n < a.Offset || (p.at+n == a.Offset && n > 0) {
			continue // wholly on an earlier page
		}
		from := max(0, a.Offset-p.at)
		m := messageRow(p.row, v)
		m.Thread = "" // the answer says it once
		cost := rowText(&m)
		if cost > left && len(res.Texts) > 0 {
			next = p.at + from
			break
		}
		left = max(0, left-cost)
		t := generated.ThreadText{Message: m}
		if q := p.reply.QuotedLines; q > 0 {
			t.QuotedLines = kit.Ptr(q)
		}
		if sl := p.reply.SignatureLines; sl > 0 {
			t.SignatureLines = kit.Ptr(sl)
		}
		if from > 0 {
			t.Continued = kit.Ptr(true)
		}
		rest := n - from
		if rest <= left || p.hidden {
			t.Text = p.reply.Text[from:]
			left -= min(left, rest)
			res.Texts = append(res.Texts, t)
			continue
		}
		if left == 0 && len(res.Texts) > 0 {
			next = p.at + from
			break
		}
		text, end := kit.PageText(p.reply.Text, from, max(left, 1))
		t.Text, t.Cut = text, kit.Ptr(true)
		res.Texts = append(res.Texts, t)
		next = p.at + end
		break
	}
	if next >= 0 { // the page stopped before the end (next == total: only empty texts are left)
		res.NextOffset = kit.Ptr(next)
	}
	if len(rows) >= kit.ThreadLimit {
		res.Truncated = kit.Ptr(true)
	}
	return res, nil
}
