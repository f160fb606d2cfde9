package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/postern-mcp/postern/internal/service"
	"github.com/postern-mcp/postern/internal/termsafe"
	"github.com/spf13/cobra"
)

// postern service install and remove: the unit or agent is rendered, recorded and removed
// by internal/service; this file asks and prints.

type serviceFlags struct {
	config       string
	yes, noStart bool
}

func newServiceCmd(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	var in, rm serviceFlags
	install := &cobra.Command{
		Use:   "install",
		Short: "run postern watch at login (a systemd user unit or a launchd agent; shown, then asked)",
		Long: `Write a systemd user unit (Linux: ~/.config/systemd/user/` + service.Unit + `) or
a launchd agent (macOS: ~/Library/LaunchAgents/` + service.Label + `.plist) that runs
postern watch --config PATH at login, so that the store stays synced without a
postern mcp running. The file is shown in full first and written only after a yes
(--yes: without asking; without a terminal, --yes is needed). On Linux postern
then runs systemctl --user daemon-reload and enable --now (unless --no-start, or
when systemctl is missing: the commands are printed). postern service remove
deletes exactly what was written.`,
		Example: "  postern service install\n  postern service install --yes --no-start",
		Args:    noArgs,
		RunE: func(_ *cobra.Command, _ []string) error {
			return cmdServiceInstall(&in, runtime.GOOS, stdin, stdout, stderr)
		},
	}
	addConfigFlag(install, &in.config)
	install.Flags().BoolVar(&in.yes, "yes", false, "write it without asking")
	install.Flags().BoolVar(&in.noStart, "no-start", false, "only write the file: do not run systemctl or launchctl")
	remove := &cobra.Command{
		Use:   "remove",
		Short: "stop the service and delete exactly the file install wrote",
		Long: `Stop and disable the service (when systemctl or launchctl is there, unless
--no-start), then delete the file postern service install wrote, the folders it
made for it when they are empty, and its record, leaving the home as it was. A
file changed since it was written is left alone, and said so.`,
		Example: "  postern service remove",
		Args:    noArgs,
		RunE: func(_ *cobra.Command, _ []string) error {
			return cmdServiceRemove(&rm, stdout, stderr)
		},
	}
	addConfigFlag(remove, &rm.config)
	remove.Flags().BoolVar(&rm.noStart, "no-start", false, "do not run systemctl or launchctl to stop it")
	return group("service", "run postern watch at login (systemd user unit or launchd agent)",
		`Install or remove a service that runs postern watch at login, keeping the
local store synced even while no agent host runs postern mcp.`, install, remove)
}

func cmdServiceInstall(f *serviceFlags, goos string, stdin io.Reader, stdout, stderr io.Writer) error {
	in, err := service.PlanHere(goos, f.config)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "postern service install writes %s:\n\n%s\n", termsafe.Line(in.Path), termsafe.Text(string(in.Text)))
	if !f.yes {
		if !stdinIsTerminal() {
			return errors.New("nothing was written: there is no terminal to ask; run again with --yes to write it")
		}
		fmt.Fprint(stdout, "Write it? [y/N] ")
		line, _ := bufio.NewReader(stdin).ReadString('\n')
		if a := strings.ToLower(strings.TrimSpace(line)); a != "y" && a != "yes" {
			fmt.Fprintln(stdout, "Nothing was written.")
			return exitError{1}
		}
	}
	if err := in.Write(); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Wrote %s.\n", termsafe.Line(in.Path))
	start := service.Start(goos, in.Path)
	if f.noStart {
		fmt.Fprintf(stdout, "Not started (--no-start); to start it: %s\n", strings.Join(start, " && "))
		return nil
	}
	return runService(start, stdout, stderr)
}

// runService runs the commands (split on spaces, the path last and quoted) when their program
// is on PATH; else it prints them for the person.
func runService(cmds []string, stdout, stderr io.Writer) error {
	missing, err := service.Run(cmds)
	if re := (*service.RunError)(nil); errors.As(err, &re) {
		fmt.Fprintf(stderr, "postern: %s failed: %s\n", termsafe.Line(re.Cmd), termsafe.Line(re.Output))
		return exitError{1}
	}
	if missing != "" {
		fmt.Fprintf(stdout, "%s is not on PATH; run yourself: %s\n", missing, strings.Join(cmds, " && "))
		return nil
	}
	fmt.Fprintf(stdout, "Ran %s.\n", strings.Join(cmds, " && "))
	return nil
}

func cmdServiceRemove(f *serviceFlags, stdout, stderr io.Writer) error {
	cfgPath, err := filepath.Abs(f.config)
	if err != nil {
		return err
	}
	in, err := service.Find(cfgPath)
	if err != nil {
		return err
	}
	if in.Present {
		if !f.noStart {
			if err := runService(service.Stop(in.GOOS, in.File), stdout, stderr); err != nil {
				return err
			}
		}
		if err := in.RemoveFile(); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "Deleted %s.\n", termsafe.Line(in.File))
	}
	return in.RemoveRecord()
}
