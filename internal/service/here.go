package service

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/postern-mcp/postern/internal/config"
)

// PlanHere is Plan for this postern (its executable, links resolved, so that the service
// survives the link moving), this home folder and the configuration at cfgPath, made absolute
// and read first so that a broken one is refused before anything is written.
func PlanHere(goos, cfgPath string) (*Install, error) {
	cfgPath, err := filepath.Abs(cfgPath)
	if err != nil {
		return nil, err
	}
	if _, err := config.Load(cfgPath); err != nil {
		return nil, err
	}
	bin, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("cannot tell where postern is (%v); run it by its full path", err)
	}
	if b, err := filepath.EvalSymlinks(bin); err == nil {
		bin = b
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return nil, fmt.Errorf("cannot tell the home folder (%v); set HOME", err)
	}
	return Plan(goos, home, bin, cfgPath)
}

// RunError is a command of Start or Stop that failed, with what it printed.
type RunError struct{ Cmd, Output string }

func (e *RunError) Error() string { return e.Cmd + " failed: " + e.Output }

// Run runs the commands of Start or Stop in order. At one whose program is not on PATH it
// stops, and missing names that program, for the person to run them; a command that fails is
// a RunError, and the ones after it are not run.
func Run(cmds []string) (missing string, err error) {
	for _, c := range cmds {
		words := Words(c)
		if _, err := exec.LookPath(words[0]); err != nil {
			return words[0], nil
		}
		out, err := exec.Command(words[0], words[1:]...).CombinedOutput()
		if err != nil {
			return "", &RunError{Cmd: c, Output: strings.TrimSpace(string(out))}
		}
	}
	return "", nil
}
