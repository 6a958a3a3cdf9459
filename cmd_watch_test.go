package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestWatchPrintsOneLinePerEventUntilInterrupted(t *testing.T) {
	_, endpoints, cli := startEtcd(t, 1)
	resp, err := cli.Put(t.Context(), "/registry/configmaps/default/before", "x")
	if err != nil {
		t.Fatal(err)
	}
	start := resp.Header.Revision + 1
	for _, output := range []string{"lines", "json"} {
		t.Run(output, func(t *testing.T) {
			args := []string{"--endpoints", endpoints, "watch", "/registry/configmaps/", "--rev", fmt.Sprint(start)}
			if output == "json" {
				args = append(args, "-o", "json")
			}
			cmd := etcdscope(args)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
			if output == "lines" {
				put := func(k, v string) { cli.Put(t.Context(), k, v) }
				put("/registry/configmaps/default/a", "1")
				put("/registry/configmaps/default/a", "22")
				put("/registry/secrets/default/s", "not watched")
				cli.Delete(t.Context(), "/registry/configmaps/default/a")
			}
			lines := make(chan string)
			go func() {
				sc := bufio.NewScanner(stdout)
				for sc.Scan() {
					lines <- sc.Text()
				}
				close(lines)
			}()
			want := []struct{ typ, key string }{
				{"ADDED", "/registry/configmaps/default/a"},
				{"MODIFIED", "/registry/configmaps/default/a"},
				{"DELETED", "/registry/configmaps/default/a"},
			}
			for i, w := range want {
				var line string
				select {
				case line = <-lines:
				case <-time.After(30 * time.Second):
					t.Fatalf("no line %d within 30s", i)
				}
				var typ, key string
				if output == "json" {
					var ev struct{ Type, Key string }
					if err := json.Unmarshal([]byte(line), &ev); err != nil {
						t.Fatalf("line %q: %v", line, err)
					}
					typ, key = ev.Type, ev.Key
				} else if f := strings.Fields(line); len(f) >= 3 {
					typ, key = f[1], f[2]
				}
				if typ != w.typ || key != w.key {
					t.Errorf("line %q, want %s %s", line, w.typ, w.key)
				}
			}
			// Ctrl-C ends it as a shell reports an interrupted command:
			// status 130 (128 + SIGINT), and no error message.
			cmd.Process.Signal(syscall.SIGINT)
			var exit *exec.ExitError
			if err := cmd.Wait(); !errors.As(err, &exit) || exit.ExitCode() != 130 {
				t.Errorf("after SIGINT: %v, want exit status 130", err)
			}
			if stderr.Len() > 0 {
				t.Errorf("after SIGINT, stderr %q, want nothing", stderr.String())
			}
		})
	}
}

func TestOutputToAPipeHasNoColour(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if p := paletteFor(w); p.color || p.added("ADDED") != "ADDED" {
		t.Error("a pipe gets colour")
	}
}
