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
)

// cmdLog prints a month of the audit log: what agents called, when, and what they got.
func cmdLog(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("log", stderr, "Usage: postern log [--month YYYY-MM] [--json]\n\nShow what agents asked postern and what they were given (ids and lengths, never text).\n\nFlags:\n")
	month := fs.String("month", time.Now().UTC().Format("2006-01"), "the month to show")
	asJSON := fs.Bool("json", false, "print the entries as JSON lines")
	if err := fs.Parse(args); err != nil {
		return err
	}
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
		enc := json.NewEncoder(stdout)
		for _, e := range entries {
			if err := enc.Encode(e); err != nil {
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
	for _, e := range entries {
		status := "ok"
		if !e.OK {
			status = "refused or failed: " + e.Error
		}
		args, _ := json.Marshal(e.Args)
		ids := ""
		if len(e.IDs) > 0 {
			ids = fmt.Sprintf(" ids %s", strings.Join(e.IDs, ","))
			if e.IDsMore > 0 {
				ids += fmt.Sprintf(" (+%d)", e.IDsMore)
			}
		}
		fmt.Fprintf(stdout, "%s  %s  %s %s  %s  %d bytes%s\n", e.Time.UTC().Format("2006-01-02 15:04:05"), e.Client, e.Tool, args, status, e.Length, ids)
	}
	return nil
}
