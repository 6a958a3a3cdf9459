package cli

import (
	"bytes"
	"io"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestCommandsDoNotQueryTheTerminal runs commands on a terminal that
// never answers, as a serial console or `script` is: bubbletea's init
// used to ask it for its background and cursor and wait 5 s for each
// command. They must finish at once and write no query.
func TestCommandsDoNotQueryTheTerminal(t *testing.T) {
	for _, args := range [][]string{
		{"--version"},
		{"--help"},
		{"get", "--db", kube17 + "boltdb-db", "ns"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			term, tty := openPTY(t)
			cmd := etcdscope(args, "TERM=xterm-256color", "NO_COLOR=")
			cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
			cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
			start := time.Now()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			tty.Close()
			var out bytes.Buffer
			read := make(chan struct{})
			go func() { io.Copy(&out, term); close(read) }()
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			select {
			case err := <-exited:
				if err != nil {
					t.Fatalf("exit: %v", err)
				}
			case <-time.After(time.Minute):
				cmd.Process.Kill()
				t.Fatal("still running after a minute")
			}
			took := time.Since(start)
			<-read // the pty reads EIO once the process and its tty are gone
			if bytes.Contains(out.Bytes(), []byte("\x1b]11;?")) || bytes.Contains(out.Bytes(), []byte("\x1b[6n")) {
				t.Errorf("wrote a terminal query: %q", out.Bytes()[:min(out.Len(), 200)])
			}
			t.Logf("exited after %v", took)
			if out.Len() == 0 {
				t.Error("printed nothing")
			}
		})
	}
}
