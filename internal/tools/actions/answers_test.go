package actions

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/postern-mcp/postern/generated"
	"github.com/postern-mcp/postern/internal/tools/kit"
)

// TestShortAnswerHostile: however long and however escaped the strings of 500 rows (subjects,
// folders, senders, reasons), an action's answer stays under 16 KB with its counts, shows at
// least one row and gives the cursor to the others.
func TestShortAnswerHostile(t *testing.T) {
	for _, fill := range []string{"<", "\"", "é", "a", "\u2028", "\x00"} {
		long := strings.Repeat(fill, 8000)
		var rows []answerRow
		for i := 0; i < 500; i++ {
			rows = append(rows, answerRow{
				row:    generated.ActionRow{ID: fmt.Sprintf("m%d", i+1), Outcome: outFailed, From: fmt.Sprintf("%s%d", long, i%30), To: long, Subject: long, Reason: long},
				sender: fmt.Sprintf("%s%d@example.com", long, i%40),
			})
		}
		res := &generated.ActionResult{ActionID: "a7", Action: "move to " + long[:min(len(long), 500)]}
		if err := (&Actions{}).shortAnswer(context.Background(), nil, res, rows, nil); err != nil {
			t.Fatal(err)
		}
		n := AnswerSize(res)
		t.Logf("fill %q: %d bytes, %d rows, %d+%d counts", fill, n, len(res.Messages), len(res.ByFolder), len(res.BySender))
		if n > 16<<10 {
			t.Errorf("fill %q: the answer takes %d bytes", fill, n)
		}
		if len(res.Messages) == 0 || len(res.ByFolder) == 0 || len(res.BySender) == 0 || res.NextCursor != rowCursor(7, len(res.Messages)) {
			t.Errorf("fill %q: %d rows, %d and %d counts, cursor %q", fill, len(res.Messages), len(res.ByFolder), len(res.BySender), res.NextCursor)
		}
		if *res.LeftAlone != 500 {
			t.Errorf("fill %q: left_alone %d, want 500", fill, *res.LeftAlone)
		}
	}
}

// TestTallies: the top n, most first, ties by name, empty keys not counted.
func TestTallies(t *testing.T) {
	got := Tallies([]string{"b", "a", "", "b", "c", "a", "d", "b"}, 3)
	if fmt.Sprint(got) != "[{b 3} {a 2} {c 1}]" {
		t.Errorf("Tallies = %v", got)
	}
}

// TestRowCursor: a cursor of an action's rows is refused for another action, and the log's
// cursors are never taken for one.
func TestRowCursor(t *testing.T) {
	c := rowCursor(12, 40)
	if n, err := decodeRowCursor(&c, 12); err != nil || n != 40 {
		t.Errorf("decodeRowCursor = %d, %v", n, err)
	}
	if _, err := decodeRowCursor(&c, 13); err == nil {
		t.Error("another action's cursor was taken")
	}
	log := kit.EncodeCursor(12)
	if _, err := decodeRowCursor(&log, 12); err == nil {
		t.Error("a cursor of the log was taken for one of rows")
	}
	if v, _ := kit.DecodeCursor(&c); !isRowCursor(v) {
		t.Error("a row cursor is not told apart")
	}
}
