package cli

import (
	"errors"
	"fmt"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/etcdscope/etcdscope/cli/cmdutil"
	"github.com/etcdscope/etcdscope/etcdview"
	"github.com/etcdscope/etcdscope/etcdview/record"
	"github.com/spf13/cobra"
)

func newRecordCmd(conn *cmdutil.ConnFlags) *cobra.Command {
	var (
		out   string
		every time.Duration
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
the revision after, while etcd still holds it; else it records a gap and a
new snapshot. A status line goes to stderr every minute. One signal ends it,
after it committed what it read. It never writes to etcd.

--out postgres://USER@HOST:PORT/DB?cluster=NAME records into PostgreSQL
instead: the same tables in the schema NAME, one a cluster, so that many
clusters share one database; --db with the same URL reads it. The password
comes from PGPASSWORD or ~/.pgpass, never from the URL.`,
		Example: `  etcdscope record --out incident.db /registry/
  etcdscope ls --db incident.db /registry/pods/ --rev 1200
  etcdscope record --out 'postgres://rec@db.example:5432/recordings?cluster=prod-eu' /registry/`,
		Args:        cobra.MaximumNArgs(1),
		Annotations: map[string]string{stopsOnSignal: "record"},
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return errors.New("record needs --out FILE, the recording to write")
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
				return f.Run(cmd.Context(), src, record.Options{StatusInterval: every, Status: func(s record.Status) {
					fmt.Fprintln(errOut, p.Text(statusLine(f.Path(), s)))
				}})
			})
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "the recording to write: created, or resumed when it is one of the same PREFIX; a file, or postgres://...?cluster=NAME")
	cmd.Flags().DurationVar(&every, "status-interval", time.Minute, "how often the status line goes to stderr")
	cmd.Flags().MarkHidden("status-interval")
	return cmd
}

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
