package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mattn/go-isatty"

	"github.com/postern-mcp/postern/internal/approval"
	"github.com/postern-mcp/postern/internal/config"
	"github.com/postern-mcp/postern/internal/termsafe"
)

// approvalQueue is where postern mcp holds commits for postern approve.
func approvalQueue() *approval.Queue {
	return &approval.Queue{Dir: filepath.Join(config.StateDir(), "approvals")}
}

// approveLong is the help of postern approve: only sends are held today.
const approveLong = `List the actions an agent prepared that wait for your approval, with their
previews; approve or decline one by its code.

  postern approve                 list the actions waiting for you
  postern approve CODE            show one and approve it (asks y/N in this terminal)
  postern approve --decline CODE  decline it: nothing is done

An agent's send waits here when its host cannot ask you in its own window and the
configuration's [approval] mode is "terminal" (the default). Approving needs a
terminal: this command will not approve from a pipe or a script.`

// approveFlags are the flags of postern approve.
type approveFlags struct{ decline, asJSON bool }

func cmdApprove(f *approveFlags, pos []string, stdin io.Reader, stdout, stderr io.Writer) error {
	decline, asJSON := &f.decline, &f.asJSON
	q := approvalQueue()
	if len(pos) == 0 {
		if *decline {
			return fmt.Errorf("--decline needs the code of the action to decline")
		}
		held, err := q.List()
		if err != nil {
			return err
		}
		if *asJSON {
			type row struct {
				Code    string `json:"code"`
				Ref     string `json:"ref"`
				Tool    string `json:"tool"`
				Account string `json:"account"`
				Client  string `json:"client,omitempty"`
				Created string `json:"created"`
				Expires string `json:"expires"`
				Preview string `json:"preview"`
			}
			rows := []row{}
			for _, h := range held {
				rows = append(rows, row{h.Code, h.Ref, h.Tool, h.Account, h.Client, h.Created.Format(time.RFC3339), h.Expires.UTC().Format(time.RFC3339), h.Text})
			}
			b, _ := json.MarshalIndent(rows, "", "  ")
			fmt.Fprintln(stdout, string(termsafe.JSON(b)))
			return nil
		}
		if len(held) == 0 {
			fmt.Fprintln(stdout, "Nothing is waiting for your approval.")
			return nil
		}
		for _, h := range held {
			printHeld(stdout, h)
		}
		fmt.Fprintln(stdout, "Approve one with: postern approve CODE   (or decline: postern approve --decline CODE)")
		return nil
	}
	h, err := q.Get(pos[0])
	if errors.Is(err, approval.ErrNoSuchCode) {
		return fmt.Errorf("no action is waiting under %q (it may have ended or been answered); run postern approve to list those that are", pos[0])
	}
	if err != nil {
		return err
	}
	if *decline {
		if err := q.Decide(h.Code, false); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "Declined %s: nothing will be done.\n", h.Code)
		return nil
	}
	if f, ok := stdin.(*os.File); !ok || !isatty.IsTerminal(f.Fd()) {
		return fmt.Errorf("approving needs you at a terminal (standard input is not one); run postern approve %s yourself in a terminal", h.Code)
	}
	printHeld(stdout, h)
	fmt.Fprintf(stdout, "Approve %s? Type y and Enter to approve, anything else declines: ", h.Code)
	line, _ := bufio.NewReader(stdin).ReadString('\n')
	yes := strings.EqualFold(strings.TrimSpace(line), "y") || strings.EqualFold(strings.TrimSpace(line), "yes")
	if err := q.Decide(h.Code, yes); err != nil {
		return err
	}
	if yes {
		fmt.Fprintf(stdout, "Approved %s; postern carries it out now.\n", h.Code)
	} else {
		fmt.Fprintf(stdout, "Declined %s: nothing will be done.\n", h.Code)
	}
	return nil
}

// printHeld shows a held action. Its preview holds what an agent wrote (recipients, subject,
// the first lines of the body) and the client's own name: every field is escaped (termsafe),
// and the preview's lines, which postern laid out, are each escaped as one line.
func printHeld(w io.Writer, h approval.Held) {
	left := time.Until(h.Expires).Round(time.Second)
	who := ""
	if h.Client != "" {
		who = " asked by " + termsafe.Line(h.Client)
	}
	fmt.Fprintf(w, "[%s] %s for account %s%s (waits %v more; audit ref %s)\n", termsafe.Line(h.Code), termsafe.Line(h.Tool), termsafe.Line(h.Account), who, left, termsafe.Line(h.Ref))
	for _, l := range strings.Split(h.Text, "\n") {
		fmt.Fprintf(w, "    %s\n", termsafe.Line(l))
	}
	fmt.Fprintln(w)
}
