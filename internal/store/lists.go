package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"strings"

	"github.com/postern-mcp/postern/internal/mailparse"
)

// listColumns are the messages' mailing-list columns (schema 8): whether a message comes
// from a list, whether it offers an RFC 8058 one-click unsubscribe, and its List-Unsubscribe
// URIs, which no answer shows (Store.Unsubscribe).
var listColumns = []struct{ name, decl string }{
	{"list", "INTEGER NOT NULL DEFAULT 0"},
	{"one_click", "INTEGER NOT NULL DEFAULT 0"},
	{"unsubscribe", "TEXT NOT NULL DEFAULT ''"},
}

// fillLists adds the list columns when they are missing (a store set back to an older schema
// may have them) and fills them for mail stored before schema 8 from its stored header
// fields (bodies.headers), and rewrites their List-Unsubscribe as sync now stores it
// (mailparse.ShowUnsubscribe), so that mail_headers never shows an unsubscribe token. The
// stored fields were masked at sync; a URI the mask changed (a marker in it) is dropped, and
// such a message is listed but offers no unsubscribe until a resync.
func fillLists(ctx context.Context, tx *sql.Tx) error {
	have := map[string]bool{}
	cols, err := tx.QueryContext(ctx, `SELECT name FROM pragma_table_info('messages')`)
	if err != nil {
		return err
	}
	for cols.Next() {
		var n string
		if err := cols.Scan(&n); err != nil {
			cols.Close()
			return err
		}
		have[n] = true
	}
	cols.Close()
	for _, c := range listColumns {
		if !have[c.name] {
			if _, err := tx.ExecContext(ctx, `ALTER TABLE messages ADD COLUMN `+c.name+` `+c.decl); err != nil {
				return err
			}
		}
	}
	rows, err := tx.QueryContext(ctx, `SELECT id, headers FROM bodies
		WHERE headers LIKE '%"List-%' OR headers LIKE '%"Precedence"%'`)
	if err != nil {
		return err
	}
	type fill struct {
		id      int64
		l       mailparse.List
		headers string
	}
	var fills []fill
	for rows.Next() {
		var id int64
		var raw string
		if err := rows.Scan(&id, &raw); err != nil {
			rows.Close()
			return err
		}
		var hs []Header
		if json.Unmarshal([]byte(raw), &hs) != nil {
			continue
		}
		l := mailparse.ListOf(toParsed(hs))
		if !l.IsList {
			continue
		}
		l.Unsubscribe = unmasked(l.Unsubscribe)
		if l.OneClick {
			l.OneClick = false
			for _, u := range l.Unsubscribe {
				l.OneClick = l.OneClick || mailparse.Scheme(u) == "https"
			}
		}
		ShowListHeaders(hs)
		b, _ := json.Marshal(hs)
		fills = append(fills, fill{id, l, string(b)})
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, f := range fills {
		if _, err := tx.ExecContext(ctx, `UPDATE messages SET list=1, one_click=?, unsubscribe=? WHERE id=?`,
			f.l.OneClick, strings.Join(f.l.Unsubscribe, "\n"), f.id); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE bodies SET headers=? WHERE id=?`, f.headers, f.id); err != nil {
			return err
		}
	}
	return nil
}

// ShowListHeaders rewrites each List-Unsubscribe field of hs as it may be shown
// (mailparse.ShowUnsubscribe): its URIs without their queries and tokens.
func ShowListHeaders(hs []Header) {
	for i := range hs {
		if strings.EqualFold(hs[i].Name, "List-Unsubscribe") {
			hs[i].Value = mailparse.ShowUnsubscribe(hs[i].Value)
		}
	}
}

func toParsed(hs []Header) []mailparse.Header {
	out := make([]mailparse.Header, len(hs))
	for i, h := range hs {
		out[i] = mailparse.Header{Name: h.Name, Value: h.Value}
	}
	return out
}

// unmasked drops the URIs a mask marker replaced part of ("[code hidden]", "[card ending
// 1234]"; their spaces are gone, as in any URI between angle brackets).
func unmasked(uris []string) []string {
	var out []string
	for _, u := range uris {
		l := strings.ToLower(u)
		if strings.Contains(l, "hidden]") || strings.Contains(l, "[cardending") || strings.Contains(l, "[ibanending") ||
			strings.Contains(l, "[socialsecuritynumber") || strings.Contains(l, "[messagewithheld") {
			continue
		}
		out = append(out, u)
	}
	return out
}
