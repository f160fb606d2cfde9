package main

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/postern-mcp/postern/internal/audit"
	"github.com/postern-mcp/postern/internal/config"
	"github.com/postern-mcp/postern/internal/termsafe"
)

// cmdLog prints a month of the audit log: what agents called, when, and what they got.
func cmdLog(monthFlag string, asJSONFlag bool, stdout, stderr io.Writer) error {
	month, asJSON := &monthFlag, &asJSONFlag
	if _, err := time.Parse("2006-01", *month); err != nil {
		return fmt.Errorf("--month %q must be YYYY-MM, such as %s", *month, time.Now().UTC().Format("2006-01"))
	}
	entries, skipped, err := audit.Read(config.StateDir(), *month)
	if err != nil {
		return err
	}
	if skipped > 0 {
		fmt.Fprintf(stderr, "postern: %d damaged line(s) of the %s log were skipped\n", skipped, *month)
	}
	if *asJSON {
		// JSON escapes controls; termsafe.JSON the DEL, C1 and bidi characters it leaves raw.
		for _, e := range entries {
			b, err := json.Marshal(e)
			if err != nil {
				return err
			}
			if _, err := stdout.Write(append(termsafe.JSON(b), '\n')); err != nil {
				return err
			}
		}
		return nil
	}
	if len(entries) == 0 {
		months, _ := audit.Months(config.StateDir())
		sort.Sort(sort.Reverse(sort.StringSlice(months)))
		fmt.Fprintf(stdout, "No calls logged in %s.", *month)
		if len(months) > 0 {
			fmt.Fprintf(stdout, " Months with calls: %s.", strings.Join(months, ", "))
		}
		fmt.Fprintln(stdout)
		return nil
	}
	// One line per call: every field an agent or a server could have written is escaped
	// (termsafe), so none can start a line of its own, move the cursor or reorder the text.
	for _, e := range entries {
		status := "ok"
		if !e.OK {
			status = "refused or failed: " + termsafe.Line(e.Error)
		}
		ids := ""
		if len(e.IDs) > 0 {
			safe := make([]string, len(e.IDs))
			for i, id := range e.IDs {
				safe[i] = termsafe.Line(id)
			}
			ids = fmt.Sprintf(" ids %s", strings.Join(safe, ","))
			if e.IDsMore > 0 {
				ids += fmt.Sprintf(" (+%d)", e.IDsMore)
			}
		}
		fmt.Fprintf(stdout, "%s  %s  %s %s  %s  %d bytes%s\n", e.Time.UTC().Format("2006-01-02 15:04:05"), termsafe.Line(e.Client), termsafe.Line(e.Tool), argsText(e.Args), status, e.Length, ids)
	}
	return nil
}

// argsText is an entry's arguments as one line of JSON: encoding/json escapes newlines and
// other controls, termsafe.JSON what it leaves raw; <, > and & are shown as they are.
func argsText(args map[string]any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(args); err != nil {
		return "(arguments not readable)"
	}
	return string(termsafe.JSON([]byte(strings.TrimSuffix(b.String(), "\n"))))
}
