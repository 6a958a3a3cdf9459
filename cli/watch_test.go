package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/etcdscope/etcdscope/cli/cmdutil"
	"github.com/etcdscope/etcdscope/decode"
	"github.com/etcdscope/etcdscope/etcdview"
)

func TestWatchPrintsOneLinePerEventUntilInterrupted(t *testing.T) {
	c, endpoints, cli := startEtcd(t, 1)
	resp, err := cli.Put(t.Context(), "/registry/configmaps/default/before", "x")
	if err != nil {
		t.Fatal(err)
	}
	start := resp.Header.Revision + 1
	for _, output := range []string{"lines", "json"} {
		t.Run(output, func(t *testing.T) {
			args := append(tlsFlags(c.TLS()), "--endpoints", endpoints, "watch", "/registry/configmaps/", "--rev", fmt.Sprint(start))
			if output == "json" {
				args = append(args, "-o", "json")
			}
			cmd, lines, stderr := startLines(t, args...)
			if output == "lines" {
				put := func(k, v string) { cli.Put(t.Context(), k, v) }
				put("/registry/configmaps/default/a", "1")
				put("/registry/configmaps/default/a", "22")
				put("/registry/secrets/default/s", "not watched")
				cli.Delete(t.Context(), "/registry/configmaps/default/a")
			}
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
	if p := cmdutil.PaletteFor(w); p.Color || p.Added("ADDED") != "ADDED" {
		t.Error("a pipe gets colour")
	}
}

// writes passes each write on, as it comes.
type writes chan string

func (w writes) Write(p []byte) (int, error) {
	w <- string(p)
	return len(p), nil
}

// TestWatchPrintsEachBatchAsItComes streams events through watch's printer
// one batch at a time and checks that each batch's lines are out before the
// next batch is in: the printer holds one batch, however long the watch.
func TestWatchPrintsEachBatchAsItComes(t *testing.T) {
	for _, output := range []string{"", decode.OutputJSON} {
		batches := make(chan etcdview.Batch)
		out := make(writes, 1)
		done := make(chan error, 1)
		go func() { done <- printWatch(cmdutil.Printer{Out: out, ErrOut: io.Discard, Output: output}, batches) }()
		for i := range 2000 {
			key := fmt.Sprintf("/registry/configmaps/default/cm-%d", i)
			ev := etcdview.Event{Type: etcdview.Modified, KV: etcdview.KV{Key: key, Value: []byte("v"), ModRevision: int64(i + 2), Version: 2}}
			batches <- etcdview.Batch{Events: []etcdview.Event{ev}}
			select {
			case line := <-out:
				if !strings.Contains(line, key+`"`) && !strings.Contains(line, key+" ") {
					t.Fatalf("-o %q: event %d printed as %q", output, i, line)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("-o %q: event %d not printed before the next batch", output, i)
			}
		}
		close(batches)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}

// TestWatchOnATerminalIsInert prints an event whose key holds C1 and bidi
// controls, which JSON leaves as they are: a terminal gets them escaped, a
// pipe as they are.
func TestWatchOnATerminalIsInert(t *testing.T) {
	key := "/registry/configmaps/default/a\u009b2J\u202eb"
	ev := etcdview.Event{Type: etcdview.Added, KV: etcdview.KV{Key: key, Value: []byte("v"), ModRevision: 5, Version: 1}}
	for _, output := range []string{"", decode.OutputJSON} {
		var tty, pipe bytes.Buffer
		for _, s := range []cmdutil.Printer{{Out: &tty, ErrOut: io.Discard, P: cmdutil.Palette{TTY: true}, Output: output}, {Out: &pipe, ErrOut: io.Discard, Output: output}} {
			batches := make(chan etcdview.Batch, 1)
			batches <- etcdview.Batch{Events: []etcdview.Event{ev}}
			close(batches)
			if err := printWatch(s, batches); err != nil {
				t.Fatal(err)
			}
		}
		if strings.ContainsAny(tty.String(), "\u009b\u202e") || !strings.Contains(tty.String(), `2J`) {
			t.Errorf("-o %q: the terminal gets %q", output, tty.String())
		}
		if output == decode.OutputJSON && !strings.Contains(pipe.String(), "a\u009b2J\u202eb") {
			t.Errorf("-o json: a pipe gets %q, not the key's bytes", pipe.String())
		}
	}
}
