// Package testservice runs the throwaway servers of .ci/dovecot and .ci/mailpit for imaptest and
// smtptest: started into a temporary directory, shared by a test binary's tests, stopped after the
// last one (or by a watcher when the binary dies first). It never stops or removes an instance it
// did not start, such as the one .ci/run names in the environment.
package testservice

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/x509"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Script is a .ci/ script that runs a throwaway server: `.ci/NAME start DIR` starts one in DIR and
// prints its env lines (also written to DIR/env), `.ci/NAME stop DIR` stops it.
type Script struct {
	Name   string // NAME in .ci/NAME: "dovecot"
	Keep   string // when this variable is set, a stopped instance's directory is left behind: "POSTERN_DOVECOT_KEEP"
	Prefix string // the package the script serves, at the start of what it writes: "imaptest"
	Path   string // the script's absolute path, set by Find
}

// Find returns sc with Path set: .ci/NAME beside the go.mod found by walking up from the working
// directory.
func (sc Script) Find() (Script, error) {
	dir, err := os.Getwd()
	if err != nil {
		return sc, err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			p := filepath.Join(dir, ".ci", sc.Name)
			if _, err := os.Stat(p); err != nil {
				return sc, fmt.Errorf("no .ci/%s beside %s/go.mod", sc.Name, dir)
			}
			sc.Path = p
			return sc, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return sc, fmt.Errorf("no go.mod above the working directory; cannot find .ci/%s", sc.Name)
		}
		dir = parent
	}
}

// Run runs the script (found by Find) with args within ctx and returns what it printed on stdout.
// Its error names the command and holds that output and the script's stderr, only the last tail
// lines of it when tail > 0.
func (sc Script) Run(ctx context.Context, tail int, args ...string) ([]byte, error) {
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "bash", append([]string{sc.Path}, args...)...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		msg := stderr.String()
		if tail > 0 {
			msg = lastLines(stderr.Bytes(), tail)
		}
		return out, fmt.Errorf(".ci/%s %s: %v\n%s%s", sc.Name, args[0], err, out, msg)
	}
	return out, nil
}

// Instance is a server that this process started with a Script: Stop stops it, and after Watch
// so does this process's exit without Stop.
type Instance struct {
	sc       Script
	dir      string
	watcher  *exec.Cmd // stops the instance if this process dies without Stop
	watchW   *os.File  // its stdin; closing it (or dying) makes it stop the instance
	stopOnce sync.Once
	stopped  bool
}

// Own takes charge of the instance the script (found by Find) started in dir.
func (sc Script) Own(dir string) *Instance {
	return &Instance{sc: sc, dir: dir}
}

// Watch starts a process, in its own process group so a ^C to the test does not reach it, that
// stops the instance when this process exits without calling Stop (a panic, a -timeout, a kill):
// it waits for EOF on a pipe only this process holds open.
func (in *Instance) Watch() {
	r, w, err := os.Pipe()
	if err != nil {
		return
	}
	defer r.Close()
	cmd := exec.Command("bash", "-c",
		`cat >/dev/null; bash "$1" stop "$2" && if [ -z "$`+in.sc.Keep+`" ]; then rm -rf "$2"; fi`,
		in.sc.Prefix+"-watch", in.sc.Path, in.dir)
	cmd.Stdin = r
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		_ = w.Close()
		return
	}
	in.watcher, in.watchW = cmd, w
}

// Stop ends the watcher, stops the instance and waits until the script says it is gone, then
// removes its directory unless the Keep variable is set. It reports whether the instance is
// stopped; a failed stop is written to stderr and not tried again.
func (in *Instance) Stop() bool {
	in.stopOnce.Do(func() {
		if in.watcher != nil {
			// Its own process group: bash and the cat it waits on.
			_ = syscall.Kill(-in.watcher.Process.Pid, syscall.SIGKILL)
			_ = in.watcher.Wait()
			_ = in.watchW.Close()
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		out, err := exec.CommandContext(ctx, "bash", in.sc.Path, "stop", in.dir).CombinedOutput()
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: .ci/%s stop %s: %v\n%s", in.sc.Prefix, in.sc.Name, in.dir, err, out)
			return
		}
		if os.Getenv(in.sc.Keep) == "" {
			_ = os.RemoveAll(in.dir)
		}
		in.stopped = true
	})
	return in.stopped
}

// LogTail writes the last n lines of each of the logs named (files in dir) to the test's log.
func (sc Script) LogTail(tb testing.TB, dir string, n int, logs ...string) {
	for _, name := range logs {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			continue
		}
		tb.Logf("%s: last lines of %s/%s:\n%s", sc.Prefix, dir, name, lastLines(b, n))
	}
}

// Shared is the one server of a test binary: started by the first test that asks for it, held
// by each test that did (and by Hold), and stopped when the last lets go. Its zero value is ready.
type Shared[S interface {
	comparable
	Stop()
}] struct {
	mu      sync.Mutex
	srv     S
	holders int
	err     error // a failed start, so later tests end fast
}

// Start returns the shared server, calling start when there is none, and holds it until tb's
// cleanup, which writes logTail to the test's log if the test failed and stops the server if no
// one else holds it. After a failed start it returns that error without trying again.
func (sh *Shared[S]) Start(tb testing.TB, start func() (S, error), logTail func(S, testing.TB)) (S, error) {
	var none S
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.err != nil {
		return none, sh.err
	}
	if sh.srv == none {
		s, err := start()
		if err != nil {
			sh.err = err
			return none, err
		}
		sh.srv = s
	}
	s := sh.srv
	sh.holders++
	tb.Cleanup(func() {
		if tb.Failed() {
			logTail(s, tb)
		}
		sh.release(s)
	})
	return s, nil
}

func (sh *Shared[S]) release(s S) {
	var none S
	sh.mu.Lock()
	sh.holders--
	last := sh.holders == 0 && sh.srv == s
	if last {
		sh.srv = none
	}
	sh.mu.Unlock()
	if last {
		s.Stop()
	}
}

// Hold keeps the server that Start makes (if any test starts it) until release is called, which
// stops it if no one else holds it.
func (sh *Shared[S]) Hold() (release func()) {
	sh.mu.Lock()
	sh.holders++
	sh.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			var none S
			sh.mu.Lock()
			sh.holders--
			s := sh.srv
			last := sh.holders == 0 && s != none
			if last {
				sh.srv = none
			}
			sh.mu.Unlock()
			if last {
				s.Stop()
			}
		})
	}
}

// Run runs the tests of m while holding the server (if any test starts it), then lets go of it.
func (sh *Shared[S]) Run(m *testing.M) int {
	release := sh.Hold()
	defer release()
	return m.Run()
}

// Forget lets go of s if it is the shared server, once its Stop has stopped it: the next Start
// starts another.
func (sh *Shared[S]) Forget(s S) {
	var none S
	sh.mu.Lock()
	if sh.srv == s {
		sh.srv = none
	}
	sh.mu.Unlock()
}

// Unavailable ends a test whose server cannot run: it skips the test with skip, or fails it with
// fail when CI=true, where every test must run.
func Unavailable(tb testing.TB, skip, fail string) {
	tb.Helper()
	if os.Getenv("CI") == "true" {
		tb.Fatal(fail)
	}
	tb.Skip(skip)
}

// CertPool holds the self-signed certificate that the scripts make in DIR/tls/cert.pem (its names
// are 127.0.0.1 and localhost).
func CertPool(dir string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(filepath.Join(dir, "tls", "cert.pem"))
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("no certificate in %s/tls/cert.pem", dir)
	}
	return pool, nil
}

// ReadEnv reads DIR/env, the env lines of the instance started in dir.
func ReadEnv(dir string) (map[string]string, error) {
	b, err := os.ReadFile(filepath.Join(dir, "env"))
	if err != nil {
		return nil, err
	}
	return ParseEnv(b), nil
}

// ParseEnv reads KEY=VALUE lines, as the scripts print them.
func ParseEnv(b []byte) map[string]string {
	env := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), "="); ok {
			env[k] = v
		}
	}
	return env
}

// Listening checks that something accepts TCP connections on addr, as an instance that another
// process started should.
func Listening(addr string) error {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return err
	}
	c.Close()
	return nil
}

// RandHex returns n random bytes in hex, for names and passwords no other test uses.
func RandHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func lastLines(b []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
