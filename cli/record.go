package cli

import (
	"errors"
	"fmt"
	"math"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/etcdscope/etcdscope/cli/cmdutil"
	"github.com/etcdscope/etcdscope/etcdview"
	"github.com/etcdscope/etcdscope/etcdview/record"
	"github.com/spf13/cobra"
)

func newRecordCmd(conn *cmdutil.ConnFlags) *cobra.Command {
	var (
		out, keep, maxSize string
		every              time.Duration
	)
	cmd := &cobra.Command{
		Use:   "record --out FILE [PREFIX]",
		Short: "Record every change below PREFIX into a SQLite file that --db reads, until interrupted",
		Long: `record writes a recording of a live etcd or kine: a SQLite file in kine's
schema, holding a snapshot of PREFIX (every key when none is given) at the
revision it starts at, then every change, each with the time it arrived.
Opened with --db, the file is a source as any kine file: ls and get at any
recorded revision, history of every key over the whole recording, changes
--since on the recorded times, du.

Each batch of changes is one transaction: killed at any moment, the file is
whole up to its last commit, and record started again on it goes on from
the revision after, while etcd still holds it (its backlog read through
several watches at once); else it records a gap and a new snapshot. A status line goes to stderr every minute, and when it ends.
One signal ends it, after it committed what it read. It never writes to etcd.

--keep and --max-size bound the recording: the oldest revisions go (at the
start, then every 10 seconds), and it then starts later, with every key as
of its new start; the file's freed pages hold the new revisions.

--out postgres://USER@HOST:PORT/DB?cluster=NAME records into PostgreSQL
instead: the same tables in the schema NAME, one a cluster, so that many
clusters share one database; --db with the same URL reads it. The password
comes from PGPASSWORD or ~/.pgpass, never from the URL. There --keep bounds
it and --max-size is refused, and a key that is not UTF-8 ends it.`,
		Example: `  etcdscope record --out incident.db /registry/
  etcdscope record --out last-week.db --keep 7d --max-size 2GiB /registry/
  etcdscope ls --db incident.db /registry/pods/ --rev 1200
  etcdscope record --out 'postgres://rec@db.example:5432/recordings?cluster=prod-eu' /registry/`,
		Args:        cobra.MaximumNArgs(1),
		Annotations: map[string]string{stopsOnSignal: "record"},
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return errors.New("record needs --out FILE, the recording to write")
			}
			opts, err := retention(keep, maxSize)
			if err != nil {
				return err
			}
			prefix := ""
			if len(args) == 1 {
				prefix = args[0]
			}
			return cmdutil.WithSource(cmd.Context(), conn, func(src etcdview.Source) error {
				if _, ok := src.(etcdview.Offline); ok {
					return errors.New("record reads a live etcd or kine (--endpoints), not a data file")
				}
				f, err := record.Open(out, prefix)
				if err != nil {
					return err
				}
				defer f.Close()
				errOut := cmd.ErrOrStderr()
				p := cmdutil.PaletteFor(errOut)
				opts.StatusInterval = every
				opts.Status = func(s record.Status) { fmt.Fprintln(errOut, p.Text(statusLine(f.Path(), s))) }
				defer debug.SetMemoryLimit(debug.SetMemoryLimit(recordMemoryLimit))
				return f.Run(cmd.Context(), src, opts)
			})
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "the recording to write: created, or resumed when it is one of the same PREFIX; a file, or postgres://...?cluster=NAME")
	cmd.Flags().StringVar(&keep, "keep", "", "drop the revisions older than this (7d, 12h, 90m)")
	cmd.Flags().StringVar(&maxSize, "max-size", "", "drop the oldest revisions past this size of the file (2GiB, 500MB)")
	cmd.Flags().DurationVar(&every, "status-interval", time.Minute, "how often the status line goes to stderr")
	cmd.Flags().MarkHidden("status-interval")
	return cmd
}

// recordMemoryLimit is the runtime's soft memory limit while record runs.
// Catching up on a backlog, the watch delivers a window of 1000 revisions
// a batch (etcdview's CatchUp), and what the writer is done with is
// garbage at once: with the collector's default pace the process's
// anonymous memory reached 53 MB catching up on 100k puts, beside the
// binary's 95 MB of resident pages, and 153 MiB in all beside a writer at
// etcd's maximum rate (bench/run --only record), where the goal is 150 MB.
// Under this limit it stays at 30 MB, at the same speed: what is live is a
// few windows and a transaction's rows, under 25 MB.
const recordMemoryLimit = 32 << 20

// statusLine is one line of record's stderr.
func statusLine(path string, s record.Status) string {
	switch {
	case s.Gap != nil:
		return fmt.Sprintf("etcdscope record: gap: revisions %d to %d were compacted before they could be recorded; a new snapshot at %d holds %d keys written in them and %d deleted, their changes between lost",
			s.Gap.From, s.Gap.To, s.Gap.To, s.Gap.Written, s.Gap.Deleted)
	case s.Note != "":
		return "etcdscope record: " + s.Note
	}
	return fmt.Sprintf("etcdscope record: revision %d, %.1f events/s, %s %s, lag %d revisions",
		s.Revision, s.Rate, path, humanize.IBytes(uint64(s.Size)), s.Lag)
}

// retention is the bounds --keep and --max-size give: a duration in days
// (7d) or as Go writes one (12h), and a size as humanize reads one (2GiB).
func retention(keep, maxSize string) (record.Options, error) {
	var opts record.Options
	if keep != "" {
		d, err := time.ParseDuration(keep)
		if days, ok := strings.CutSuffix(keep, "d"); ok {
			var n float64
			n, err = strconv.ParseFloat(days, 64)
			d = time.Duration(n * float64(24*time.Hour))
		}
		if err != nil || d <= 0 {
			return opts, fmt.Errorf("--keep %q: want a duration above 0, as 7d, 12h or 90m", keep)
		}
		opts.Keep = d
	}
	if maxSize != "" {
		n, err := humanize.ParseBytes(maxSize)
		if err != nil || n == 0 || n > math.MaxInt64 {
			return opts, fmt.Errorf("--max-size %q: want a size above 0, as 2GiB or 500MB", maxSize)
		}
		opts.MaxSize = int64(n)
	}
	return opts, nil
}
