package cli

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/dustin/go-humanize"
	"github.com/etcdscope/etcdscope/cli/cmdutil"
	"github.com/etcdscope/etcdscope/decode"
	"github.com/etcdscope/etcdscope/etcdview"
	"github.com/spf13/cobra"
)

func newStatusCmd(conn *cmdutil.ConnFlags) *cobra.Command {
	var output *cmdutil.PrintFlags
	cmd := &cobra.Command{
		Use:   "status [-o table|json]",
		Short: "Show the etcd members: leader, Raft term and index, DB size, version",
		Long: `status asks every member of the cluster for its status, in parallel, as
etcdctl endpoint status --cluster does: leader, Raft term, committed and
applied index, revision, DB size and size in use, version and alarms. A
member that does not answer is listed with its error. Against kine (k3s'
etcd API over SQL) it says it is kine and which etcd version kine emulates,
with the revision and DB size kine reports: kine has no Raft to show.
Against --db it describes the data file.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			pr, err := output.ToPrinter(cmd)
			if err != nil {
				return err
			}
			return cmdutil.WithSource(cmd.Context(), conn, func(src etcdview.Source) error {
				cl, err := src.Status(cmd.Context())
				if err != nil {
					return err
				}
				if pr.Output == decode.OutputJSON {
					w := pr.P.Writer(pr.Out)
					if err := cmdutil.WriteDoc(w, decode.OutputJSON, statusDoc(cl)); err != nil {
						return err
					}
					return w.Flush()
				}
				return printStatus(pr.Out, pr.P, cl)
			})
		},
	}
	output = cmdutil.AddPrintFlags(cmd, cmdutil.OutputTable, "table or json", cmdutil.OutputTable, decode.OutputJSON)
	return cmd
}

func printStatus(w io.Writer, p cmdutil.Palette, cl etcdview.Cluster) error {
	// Names, endpoints and versions are what the members say of
	// themselves: shown inert, as everything else read from etcd.
	fmt.Fprintf(w, "%s, revision %d", p.Text(cl.Description), cl.Revision)
	if cl.CompactRevision > 0 {
		fmt.Fprintf(w, ", compacted at %d", cl.CompactRevision)
	}
	fmt.Fprintln(w)
	if cl.Kine {
		return printKineStatus(w, p, cl)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tENDPOINT\tID\tVERSION\tDB SIZE\tIN USE\tLEADER\tTERM\tINDEX\tAPPLIED\tREVISION\tERRORS")
	for _, m := range cl.Members {
		if m.Err != nil {
			fmt.Fprintf(tw, "%s\t%s\t%x\t\t\t\t\t\t\t\t\t%s\n", p.Text(m.Name), p.Text(m.Endpoint), m.ID, p.Removed("unreachable: "+m.Err.Error()))
			continue
		}
		leader := "false"
		if m.Leader {
			leader = "true"
		}
		role := ""
		if m.Learner {
			role = " (learner)"
		}
		fmt.Fprintf(tw, "%s%s\t%s\t%x\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t%s\n",
			p.Text(m.Name), role, p.Text(m.Endpoint), m.ID, p.Text(m.Version), humanize.IBytes(uint64(m.DBSize)), inUse(m),
			leader, m.RaftTerm, m.RaftIndex, m.Applied, m.Revision, p.Removed(strings.Join(m.Alarms, ", ")))
	}
	return tw.Flush()
}

// printKineStatus is the member table of kine, which stores the cluster in
// SQL and has no Raft: no term, index, leader election or alarms to show.
func printKineStatus(w io.Writer, p cmdutil.Palette, cl etcdview.Cluster) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tENDPOINT\tEMULATES\tDB SIZE\tREVISION")
	for _, m := range cl.Members {
		fmt.Fprintf(tw, "%s\t%s\tetcd %s\t%s\t%d\n", p.Text(m.Name), p.Text(m.Endpoint), p.Text(m.Version), humanize.IBytes(uint64(m.DBSize)), m.Revision)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w, "kine keeps the store in SQL and has no Raft: no leader, term or index to show")
	return err
}

func inUse(m etcdview.Member) string {
	if m.DBInUse == 0 {
		return ""
	}
	return humanize.IBytes(uint64(m.DBInUse))
}

// memberJSON is one member in status -o json; the ID in hex, as etcdctl
// prints member IDs.
type memberJSON struct {
	Name      string   `json:"name"`
	Endpoint  string   `json:"endpoint"`
	ID        string   `json:"id"`
	Leader    bool     `json:"leader"`
	Learner   bool     `json:"learner,omitempty"`
	Version   string   `json:"version,omitempty"`
	DBSize    int64    `json:"dbSize"`
	DBInUse   int64    `json:"dbSizeInUse,omitempty"`
	RaftTerm  uint64   `json:"raftTerm"`
	RaftIndex uint64   `json:"raftIndex"`
	Applied   uint64   `json:"raftAppliedIndex"`
	Revision  int64    `json:"revision"`
	Alarms    []string `json:"errors,omitempty"`
	Error     string   `json:"unreachable,omitempty"`
}

func statusDoc(cl etcdview.Cluster) map[string]any {
	members := make([]memberJSON, 0, len(cl.Members))
	for _, m := range cl.Members {
		mj := memberJSON{
			Name: m.Name, Endpoint: m.Endpoint, ID: fmt.Sprintf("%x", m.ID), Leader: m.Leader, Learner: m.Learner,
			Version: m.Version, DBSize: m.DBSize, DBInUse: m.DBInUse, RaftTerm: m.RaftTerm, RaftIndex: m.RaftIndex,
			Applied: m.Applied, Revision: m.Revision, Alarms: m.Alarms,
		}
		if m.Err != nil {
			mj.Error = m.Err.Error()
		}
		members = append(members, mj)
	}
	doc := map[string]any{"description": cl.Description, "server": cl.Server(), "revision": cl.Revision, "compactRevision": cl.CompactRevision, "members": members}
	if cl.Kine {
		doc["emulatedVersion"] = cl.EmulatedVersion
	}
	return doc
}
