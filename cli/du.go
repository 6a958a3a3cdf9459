package cli

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/etcdscope/etcdscope/cli/cmdutil"
	"github.com/etcdscope/etcdscope/decode"
	"github.com/etcdscope/etcdscope/etcdview"
	"github.com/etcdscope/etcdscope/etcdview/space"
	"github.com/spf13/cobra"
)

// duFlags are du's own flags.
type duFlags struct {
	depth, top int
	sort       string
	rev        int64
	quota      int64
	history    bool
	rateFor    time.Duration
	output     *cmdutil.PrintFlags
}

func newDuCmd(conn *cmdutil.ConnFlags) *cobra.Command {
	f := &duFlags{}
	cmd := &cobra.Command{
		Use:   "du [PREFIX] [--depth N] [--top N] [--sort bytes|keys|revisions|rate] [-o table|json] [--quota-bytes B]",
		Short: "Show where etcd's bytes and writes go, for every level of the key tree",
		Long: `du reads every key below PREFIX (default /registry) with its value, and sums,
for each level of the tree down to --depth (resource, namespace, object): the
keys, the bytes of the current values (key and value, as etcd stores them) and
each level's share of its parent and of the whole, and the writes the keys
took since they were created (their versions). It lists the largest objects
and the hottest keys, each member's DB size, the part in use and the part
defragmentation would give back, against the quota; and one line of guidance
for each top finding. It reads only: it suggests, and never compacts or
defragments.

Live, du watches PREFIX while it reads (and --rate-for longer) for the rate of
writes per level, and forecasts when the DB reaches the quota at that rate.
The revisions etcd still holds (history) come with --history, which replays
them through a watch from the compaction revision: a read of every revision
etcd holds, about its DB size in use. An offline data file (--db) holds them
all, and du reads them always, with the file's page usage from bbolt.`,
		Example: `  etcdscope du /registry --depth 1
  etcdscope du /registry/events --sort keys --top 20
  etcdscope du --history --rate-for 30s -o json
  etcdscope du --db member/snap/db --depth 3`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			prefix := decode.DefaultPrefix
			if len(args) == 1 {
				prefix = args[0]
			}
			return runDu(cmd, conn, f, prefix)
		},
	}
	cmd.Flags().IntVar(&f.depth, "depth", space.DefaultDepth, "levels of the tree below PREFIX to show (objects are at 3, or 4 for custom resources)")
	cmd.Flags().IntVar(&f.top, "top", space.DefaultTop, "keys in the lists of largest and hottest")
	cmd.Flags().StringVar(&f.sort, "sort", string(space.ByBytes), "order of each level: bytes, keys, revisions (held, with history; else writes since creation) or rate")
	cmd.Flags().Int64Var(&f.rev, "rev", 0, "read as of this revision (0: the newest)")
	cmd.Flags().Int64Var(&f.quota, "quota-bytes", space.DefaultQuota, "the members' --quota-backend-bytes (etcd's default: 2 GiB)")
	cmd.Flags().BoolVar(&f.history, "history", false, "live: also read every revision etcd holds (a replay from the compaction revision); a data file always has them")
	cmd.Flags().DurationVar(&f.rateFor, "rate-for", 0, "live: go on measuring the rate of writes this long after the read")
	f.output = cmdutil.AddPrintFlags(cmd, cmdutil.OutputTable, "table or json", cmdutil.OutputTable, decode.OutputJSON)
	return cmd
}

// check refuses flags that mean nothing before anything is read.
func (f *duFlags) check() (space.Measure, error) {
	by, err := space.ParseMeasure(f.sort)
	switch {
	case err != nil:
		return by, fmt.Errorf("--sort: %w", err)
	case f.depth < 0:
		return by, fmt.Errorf("--depth %d: want 0 or more", f.depth)
	case f.top < 0:
		return by, fmt.Errorf("--top %d: want 0 or more", f.top)
	case f.quota <= 0:
		return by, fmt.Errorf("--quota-bytes %d: want more than 0", f.quota)
	case f.rateFor < 0:
		return by, fmt.Errorf("--rate-for %v: want 0 or more", f.rateFor)
	}
	return by, cmdutil.CheckRev("rev", f.rev)
}

func runDu(cmd *cobra.Command, conn *cmdutil.ConnFlags, f *duFlags, prefix string) error {
	pr, err := f.output.ToPrinter(cmd)
	if err != nil {
		return err
	}
	by, err := f.check()
	if err != nil {
		return err
	}
	ctx := cmd.Context()
	return cmdutil.WithSource(ctx, conn, func(src etcdview.Source) error {
		ssrc, ok := src.(space.Source)
		if !ok {
			return fmt.Errorf("du cannot read %T", src)
		}
		opts := space.Options{Prefix: prefix, Rev: f.rev, Depth: f.depth, Top: f.top, History: f.history, Quota: f.quota}
		rates := watchRates(ctx, src, prefix, f.depth)
		r, err := space.Run(ctx, ssrc, opts, progressLine(pr))
		clearProgress(pr.ErrOut)
		if err != nil {
			rates.stop()
			return err
		}
		v := duView{Report: r, by: by, kine: kineServer(r, src)}
		var growth func(string) space.Growth
		if v.rates, growth, err = rates.measure(ctx, src, f.rateFor, f.top); err != nil {
			return err
		}
		if fc, ok := space.ForecastQuota(r.Members, growth); ok && v.kine == "" {
			v.forecast = &fc
		}
		v.findings = space.Guide(ctx, r, v.rates, v.forecast, managerNamer(src))
		if pr.Output == decode.OutputJSON {
			w := pr.P.Writer(pr.Out)
			if err := cmdutil.WriteDoc(w, decode.OutputJSON, v.doc()); err != nil {
				return err
			}
			return w.Flush()
		}
		return v.print(pr.Out, pr.P)
	})
}

// kineServer is how status names a live kine ("kine (emulating etcd
// 3.6.11) at ENDPOINT"), "" for any other source: du's report of kine has
// no count of writes per key and no quota. r read the status already.
func kineServer(r *space.Report, src etcdview.Source) string {
	if _, live := src.(*etcdview.Live); !live || !r.Kine {
		return ""
	}
	return r.Source
}

// rateWatch watches a live etcd's prefix for the rate of writes.
type rateWatch struct {
	meter  *space.Meter
	cancel context.CancelFunc
	done   chan struct{}
}

// watchRates starts watching prefix on a live source, from now; nil for a
// data file, which does not change.
func watchRates(ctx context.Context, src etcdview.Source, prefix string, depth int) *rateWatch {
	if _, live := src.(*etcdview.Live); !live {
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	w := &rateWatch{meter: space.NewMeter(prefix, depth, 0), cancel: cancel, done: make(chan struct{})}
	w.meter.Observe(etcdview.Batch{}, time.Now()) // the rates count from here
	ch := src.Watch(ctx, asDir(prefix), etcdview.WatchOptions{})
	go func() {
		defer close(w.done)
		for b := range ch {
			w.meter.Observe(b, time.Now())
		}
	}()
	return w
}

func (w *rateWatch) stop() {
	if w != nil {
		w.cancel()
		<-w.done
	}
}

// statusEvery is how often du reads the members' status while --rate-for
// runs, for their size after each of kube-apiserver's compactions.
const statusEvery = 5 * time.Second

// measure goes on for rateFor, then stops the watch and returns the rates
// and each member's growth: its size in use after each compaction, read
// every statusEvery, when rateFor saw two or more; else the bytes written.
// The growth of a data file, or of a read with no time to measure one, is
// unknown.
func (w *rateWatch) measure(ctx context.Context, src etcdview.Source, rateFor time.Duration, top int) (*space.Rates, func(string) space.Growth, error) {
	unknown := func(string) space.Growth { return space.Growth{} }
	if w == nil {
		return nil, unknown, nil
	}
	defer w.stop()
	trend := &space.SizeTrend{}
	if rateFor > 0 {
		end := time.After(rateFor)
		tick := time.NewTicker(statusEvery)
		defer tick.Stop()
		for done := false; !done; {
			if cl, err := src.Status(ctx); err == nil {
				trend.Observe(cl, time.Now())
			}
			select {
			case <-tick.C:
			case <-end:
				done = true
			case <-ctx.Done():
				return nil, unknown, ctx.Err()
			}
		}
		if cl, err := src.Status(ctx); err == nil {
			trend.Observe(cl, time.Now())
		}
	}
	rates := w.meter.Rates(time.Now(), top)
	written := space.WriteGrowth(rates)
	return &rates, func(member string) space.Growth {
		if g, ok := trend.Growth(member); ok {
			return g
		}
		return written
	}, nil
}

// progressLine shows the read's progress on stderr when it is a terminal,
// as one line redrawn in place at most every 100 ms; nil (no progress
// asked, so no count of the keys) otherwise.
func progressLine(pr cmdutil.Printer) func(space.Progress) {
	if !cmdutil.IsTerminal(pr.ErrOut) {
		return nil
	}
	var last time.Time
	return func(p space.Progress) {
		if time.Since(last) < 100*time.Millisecond {
			return
		}
		last = time.Now()
		line := fmt.Sprintf("reading %s: %s", p.Phase, humanize.Comma(p.Done))
		if p.Total > 0 {
			line += fmt.Sprintf(" of %s (%.0f%%)", humanize.Comma(p.Total), 100*float64(p.Done)/float64(p.Total))
		}
		// \r and erase-line: the line is redrawn in place, and
		// clearProgress erases it before the report prints.
		fmt.Fprint(pr.ErrOut, "\r\x1b[K"+line)
	}
}

// managerNamer names the manager that last wrote a key (decode.LastWriter).
func managerNamer(src etcdview.Source) space.Namer {
	return func(ctx context.Context, key string, rev int64) (string, error) {
		kv, err := src.Get(ctx, key, rev)
		if err != nil {
			return "", err
		}
		return decode.LastWriter(key, kv.Value)
	}
}

// clearProgress erases the progress line, when there is one, before the
// report prints.
func clearProgress(w io.Writer) {
	if cmdutil.IsTerminal(w) {
		fmt.Fprint(w, "\r\x1b[K")
	}
}
