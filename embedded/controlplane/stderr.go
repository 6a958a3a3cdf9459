package controlplane

import (
	"fmt"
	"os"
	"runtime/debug"

	"golang.org/x/sys/unix"
)

// captureStderr points file descriptor 2 at log until restore, and os.Stderr
// at the terminal's stderr, which the process's own messages keep using.
//
// Why: kube-apiserver's etcd client logs through a zap logger that
// k8s.io/apiserver builds at init for "stderr" (storagebackend/factory,
// etcd3ClientLogger), which no option reaches; during a leader change or
// at shutdown it would write onto the screen the TUI draws. Writes to fd 2
// made by anything else (the Go runtime's crash report among them) go to
// the log too, so the crash report is also copied to the terminal.
func captureStderr(log *os.File) (restore func(), err error) {
	terminal, err := unix.Dup(2)
	if err != nil {
		return nil, fmt.Errorf("keep the terminal's stderr: %w", err)
	}
	if err := unix.Dup2(int(log.Fd()), 2); err != nil {
		unix.Close(terminal)
		return nil, fmt.Errorf("send stderr to %s: %w", log.Name(), err)
	}
	saved, term := os.Stderr, os.NewFile(uintptr(terminal), "/dev/stderr")
	os.Stderr = term
	_ = debug.SetCrashOutput(term, debug.CrashOptions{})
	return func() {
		_ = debug.SetCrashOutput(nil, debug.CrashOptions{})
		_ = unix.Dup2(terminal, 2)
		os.Stderr = saved
		term.Close()
	}, nil
}
