package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/etcdscope/etcdscope/decode"
	"github.com/etcdscope/etcdscope/etcdview/etcdviewtest"
	clientv3 "go.etcd.io/etcd/client/v3"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// watchUntil makes this program the comparison's child: it runs the
// etcdctl watch its arguments give, copies the output to a file, and ends
// it once revision watchUntil has come (etcdctl's watch never ends by
// itself).
var watchUntil = flag.Int64("watch-until", 0, "internal: run `OUT etcdctl ARGS...`, the changes figure's etcdctl watch, up to this revision")

// changesRevisions is the window of the changes figure: the goal's.
const changesRevisions = 100_000

// changesGoal is the issue's: changes over the window at most twice the
// replay of the same revisions by etcdctl.
const changesGoal = 2

// changesFigure writes changesRevisions revisions, node Lease renewals as
// kubelets make them (each with its renew time, one put a revision), then
// times `changes /registry/ --since D --to-rev B`, D reaching back before
// the first renewal, beside `etcdctl watch --rev A --prefix /registry/ -w
// json` of the same revisions A to B to a file, and measures the peak RSS
// of changes: it keeps two values per key, not one per revision.
func changesFigure(e env) row {
	n := changesRevisions
	if e.quick {
		n = 2_000
	}
	fig := fmt.Sprintf("`changes --since` over %dk revisions", n/1000)
	goal := fmt.Sprintf("ratio ≤ %d", changesGoal)
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{e.endpoint}, DialTimeout: 5 * time.Second})
	if err != nil {
		return failed(fig, goal, err)
	}
	defer cli.Close()
	started := time.Now()
	to, err := renewLeases(context.Background(), cli, n)
	if err != nil {
		return failed(fig, goal, err)
	}
	// Far enough back that the runs to come, minutes later, still start
	// before the first renewal: the window is the same for every run.
	since := (time.Since(started) + 15*time.Minute).Round(time.Second).String()
	ours := e.etcdscopeCmd("changes", "/registry/", "--since", since, "--to-rev", strconv.FormatInt(to, 10))
	from, events, err := changesWindow(ours)
	if err != nil {
		return failed(fig, goal, err)
	}
	fig = fmt.Sprintf("`changes --since` over %dk revisions (%d to %d, %d events)", (to-from+1)/1000, from, to, events)
	theirs := append([]string{e.self, "-watch-until", strconv.FormatInt(to, 10), filepath.Join(e.tmp, "watch.json")},
		e.etcdctlCmd("watch", "--rev", strconv.FormatInt(from, 10), "--prefix", "/registry/", "-w", "json")...)
	med, err := hyperfine(e.runs, e.tmp, ours, theirs)
	if err != nil {
		return failed(fig, goal, err)
	}
	peak, err := peakRSS(ours)
	if err != nil {
		return failed(fig, goal, err)
	}
	r := ratioRow(fig, med[0], med[1], changesGoal, "etcdctl watch --rev to a file")
	r.ours = fmt.Sprintf("%s, %.0f MiB peak RSS", r.ours, peak/(1<<20))
	return r
}

// renewLeases renews the fill's node Leases in turn, n puts in all, with
// the time of each renewal, a few writers at once as kubelets renew, and
// returns the revision of the last.
func renewLeases(ctx context.Context, cli *clientv3.Client, n int) (int64, error) {
	resp, err := cli.Get(ctx, "/registry/leases/kube-node-lease/", clientv3.WithPrefix())
	if err != nil {
		return 0, err
	}
	var leases []*coordinationv1.Lease
	for _, kv := range resp.Kvs {
		if l, ok := decode.Decode(string(kv.Key), kv.Value).Object.(*coordinationv1.Lease); ok {
			leases = append(leases, l)
		}
	}
	if len(leases) == 0 {
		return 0, errors.New("the fill has no node Lease")
	}
	var next, last atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for range writers {
		wg.Go(func() {
			for i := next.Add(1) - 1; i < int64(n); i = next.Add(1) - 1 {
				l := leases[i%int64(len(leases))].DeepCopy()
				renew := metav1.NewMicroTime(time.Now())
				l.Spec.RenewTime = &renew
				key, _ := etcdviewtest.Key(l)
				value, err := etcdviewtest.Encode(l)
				if err == nil {
					var put *clientv3.PutResponse
					if put, err = cli.Put(ctx, key, string(value)); err == nil {
						last.Store(max(last.Load(), put.Header.Revision))
						continue
					}
				}
				errs <- fmt.Errorf("renew %s: %w", key, err)
				return
			}
		})
	}
	wg.Wait()
	close(errs)
	return last.Load(), <-errs
}

// writers is how many renewals are in flight at once.
const writers = 8

// changesWindow runs cmd with -o json once and reads the window it chose.
func changesWindow(cmd []string) (from int64, events int, err error) {
	c := exec.Command(cmd[0], append(cmd[1:], "-o", "json")...)
	var stderr bytes.Buffer
	c.Stderr = &stderr
	out, err := c.Output()
	if err != nil {
		return 0, 0, fmt.Errorf("%v: %w: %s", cmd, err, stderr.String())
	}
	var doc struct {
		From   struct{ Revision int64 }
		Events int
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		return 0, 0, err
	}
	return doc.From.Revision, doc.Events, nil
}

// watchChild is the process -watch-until runs: args are the output file,
// then the etcdctl command. etcdctl -w json writes one line per watch
// response; the end of a line with an event at revision until or later
// ends the watch.
func watchChild(until int64, args []string) error {
	if len(args) < 2 {
		return errors.New("-watch-until wants OUT ETCDCTL ARGS...")
	}
	out, err := os.Create(args[0])
	if err != nil {
		return err
	}
	defer out.Close()
	cmd := exec.Command(args[1], args[2:]...)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	r := bufio.NewReaderSize(stdout, 1<<20)
	w := bufio.NewWriterSize(out, 1<<20)
	seen := int64(0)
	for {
		chunk, err := r.ReadSlice('\n')
		w.Write(chunk)
		seen = max(seen, lastRevision(chunk))
		if errors.Is(err, bufio.ErrBufferFull) {
			continue // the rest of a long line
		}
		if seen >= until {
			return w.Flush()
		}
		if err == io.EOF {
			return fmt.Errorf("etcdctl ended before revision %d", until)
		}
		if err != nil {
			return err
		}
	}
}

// lastRevision is the mod_revision of the last event on a line of
// `etcdctl watch -w json`, 0 when it has none.
func lastRevision(line []byte) int64 {
	const field = `"mod_revision":`
	i := bytes.LastIndex(line, []byte(field))
	if i < 0 {
		return 0
	}
	digits := line[i+len(field):]
	end := bytes.IndexFunc(digits, func(r rune) bool { return r < '0' || r > '9' })
	if end < 0 {
		end = len(digits)
	}
	rev, _ := strconv.ParseInt(string(digits[:end]), 10, 64)
	return rev
}
