// Package secret runs the command that prints an account's secret (its password command, its
// OAuth2 token command) and reads the first line it prints. It never logs, keeps or repeats
// that line.
package secret

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// Command runs the shell command line of account (its password command, its OAuth2 token
// command: what, in words) and returns the first line it prints (a secret: noun, in words),
// which it never logs or repeats.
func Command(ctx context.Context, account, what, noun, line string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", line)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	// When ctx ends the shell is killed; a program it started that keeps the
	// output open (a pinentry, a sleep) is given half a second before Run
	// returns. A command that exited well but left such a program behind is
	// a success (ErrWaitDelay): its output was read.
	cmd.WaitDelay = 500 * time.Millisecond
	if err := cmd.Run(); err != nil && !(errors.Is(err, exec.ErrWaitDelay) && ctx.Err() == nil) {
		var ee *exec.ExitError
		why := err.Error()
		if errors.As(err, &ee) {
			why = fmt.Sprintf("exit status %d", ee.ExitCode())
		}
		return "", fmt.Errorf("the %s of account %s failed (%s); run it in a terminal to see why", what, account, why)
	}
	pw, _, _ := strings.Cut(out.String(), "\n")
	pw = strings.TrimRight(pw, "\r")
	if pw == "" {
		return "", fmt.Errorf("the %s of account %s printed nothing; it must print the %s on its first line", what, account, noun)
	}
	return pw, nil
}
