package cli

import (
	"context"
	"fmt"
	"io"
	"runtime/debug"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/etcdscope/etcdscope/cli/cmdutil"
	"github.com/etcdscope/etcdscope/decode"
	"github.com/etcdscope/etcdscope/etcdview"
	"github.com/etcdscope/etcdscope/etcdview/check"
	"github.com/spf13/cobra"
)

// membersCheck is `check members`: do the members hold the same data at
// one revision, and where not, which keys differ.
func membersCheck() checkSpec {
	return checkSpec{
		name:  "members",
		short: "Compare the members' data at one revision, down to the keys that differ",
		long: `check members pins one revision (--rev, or the newest), asks every member
for the hash of its store at that revision (HashKV, in parallel), and when the
hashes differ reads the keys (--prefix, or every key) at that revision,
serializable, from one member of each hash (members hashed alike hold the same
revisions), and lists the keys that differ with each member's mod_revision,
version and value hash. A member that is down, one still behind
the revision after --wait, and a learner get a line each; they do not fail the
check. etcd allows HashKV to the root role only: under another user the keys
are compared by range reads. kine and --db are one store: nothing to compare.
Exit status 1 when the members disagree.`,
		flags: func(cmd *cobra.Command) {
			cmd.Flags().String("prefix", "", "compare the keys that start with this prefix (default every key)")
			cmd.Flags().Int64("rev", 0, "the revision to compare (default the newest)")
			cmd.Flags().Duration("wait", check.DefaultWait, "how long to wait for a member behind the revision")
		},
		run: func(ctx context.Context, cmd *cobra.Command, src etcdview.Source) (checkReport, error) {
			opts := check.Options{}
			var err error
			if opts.Prefix, err = cmd.Flags().GetString("prefix"); err != nil {
				return nil, err
			}
			if opts.Rev, err = cmd.Flags().GetInt64("rev"); err != nil {
				return nil, err
			}
			if opts.Wait, err = cmd.Flags().GetDuration("wait"); err != nil {
				return nil, err
			}
			if opts.Rev < 0 || opts.Wait < 0 {
				return nil, fmt.Errorf("--rev and --wait take 0 or more")
			}
			line := newCheckProgress(cmd.ErrOrStderr())
			opts.Progress = line.show
			defer debug.SetMemoryLimit(debug.SetMemoryLimit(membersMemoryLimit))
			r, err := check.Members(ctx, src, opts)
			line.clear()
			if err != nil {
				return nil, err
			}
			return membersReport{r}, nil
		},
	}
}

// membersMemoryLimit is the runtime's soft memory limit while the members
// are compared. What stays live is a few chunks per store, while every
// chunk received is garbage once compared: with the collector's default
// pace the heap grew to twice the chunks in flight, and the process, about
// 90 MB resident before it reads (the binary's pages), to 205 MB on 1M
// keys (bench/run --only check), where the goal is 200.
const membersMemoryLimit = 96 << 20

// membersReport is check.Report as check prints it.
type membersReport struct{ r *check.Report }

func (m membersReport) Failed() bool { return m.r.Failed() }

func (m membersReport) Summary() string {
	r := m.r
	switch {
	case r.Single != "":
		return "members: " + r.Single
	case r.Consistent:
		return fmt.Sprintf("members: %d of %d members agree at revision %d (%s)", compared(r), len(r.Members), r.Rev, r.Method)
	case r.DifferencesTotal > 0:
		return fmt.Sprintf("members: %d members disagree at revision %d on %s of %s keys", compared(r), r.Rev,
			humanize.Comma(r.DifferencesTotal), humanize.Comma(r.Compared))
	}
	return fmt.Sprintf("members: %d members' hashes disagree at revision %d", compared(r), r.Rev)
}

func compared(r *check.Report) int {
	n := 0
	for _, m := range r.Members {
		if m.Compared {
			n++
		}
	}
	return n
}

func (m membersReport) WriteText(w io.Writer, p cmdutil.Palette) error {
	r := m.r
	summary := m.Summary()
	if m.Failed() {
		summary = p.Removed(summary)
	}
	fmt.Fprintln(w, summary)
	if r.Single != "" {
		return nil
	}
	if r.Note != "" {
		fmt.Fprintln(w, "note: "+p.Text(r.Note))
	}
	err := writeAligned(w, func(tw io.Writer) {
		fmt.Fprintln(tw, "MEMBER\tENDPOINT\tID\tREVISION\tSTATE")
		for _, mb := range r.Members {
			name := mb.Name
			if mb.Learner {
				name += " (learner)"
			}
			state := p.Text(mb.State)
			if mb.Problem {
				state = p.Changed(state)
			}
			fmt.Fprintf(tw, "%s\t%s\t%x\t%d\t%s\n", p.Text(name), p.Text(mb.Endpoint), mb.ID, mb.Revision, state)
		}
	})
	if err != nil || len(r.Differences) == 0 {
		return err
	}
	fmt.Fprintln(w)
	err = writeAligned(w, func(tw io.Writer) {
		fmt.Fprintln(tw, "KEY\tMEMBER\tMOD\tCREATE\tVERSION\tVALUE SHA-256\tSIZE")
		for _, d := range r.Differences {
			key := p.Cell(decode.EscapeKey(d.Key))
			for _, ks := range d.Members {
				if !ks.Present {
					fmt.Fprintf(tw, "%s\t%s\t-\t-\t-\tabsent\t-\n", key, p.Text(ks.Member))
				} else {
					fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%s\t%d\n", key, p.Text(ks.Member), ks.ModRevision, ks.CreateRevision,
						ks.Version, ks.ValueHash, ks.Size)
				}
				key = ""
			}
		}
	})
	if err == nil && r.DifferencesTotal > int64(len(r.Differences)) {
		fmt.Fprintf(w, "… and %s more keys that differ\n", humanize.Comma(r.DifferencesTotal-int64(len(r.Differences))))
	}
	return err
}

// checkMembersDoc is check members in -o json.
type checkMembersDoc struct {
	Revision         int64                `json:"revision"`
	CompactRevision  int64                `json:"compactRevision"`
	Prefix           string               `json:"prefix"`
	Single           string               `json:"single,omitempty"`
	Consistent       bool                 `json:"consistent"`
	Failed           bool                 `json:"failed"`
	Method           string               `json:"method,omitempty"`
	Note             string               `json:"note,omitempty"`
	Compared         int64                `json:"comparedKeys"`
	Members          []checkMemberDoc     `json:"members"`
	Differences      []checkDifferenceDoc `json:"differences"`
	DifferencesTotal int64                `json:"differencesTotal"`
}

type checkMemberDoc struct {
	Name     string `json:"name"`
	Endpoint string `json:"endpoint"`
	ID       string `json:"id"`
	Learner  bool   `json:"learner"`
	Revision int64  `json:"revision"`
	Hash     *int64 `json:"hash"`
	Compared bool   `json:"compared"`
	Problem  bool   `json:"problem"`
	State    string `json:"state"`
}

type checkDifferenceDoc struct {
	Key     string             `json:"key"`
	Members []checkKeyStateDoc `json:"members"`
}

type checkKeyStateDoc struct {
	Member         string `json:"member"`
	Present        bool   `json:"present"`
	CreateRevision int64  `json:"createRevision,omitempty"`
	ModRevision    int64  `json:"modRevision,omitempty"`
	Version        int64  `json:"version,omitempty"`
	ValueHash      string `json:"valueSha256,omitempty"`
	Size           int    `json:"size,omitempty"`
}

func (m membersReport) Doc() any {
	r := m.r
	doc := checkMembersDoc{Revision: r.Rev, CompactRevision: r.CompactRevision, Prefix: r.Prefix, Single: r.Single,
		Consistent: r.Consistent, Failed: r.Failed(), Method: r.Method, Note: r.Note, Compared: r.Compared,
		Members: []checkMemberDoc{}, Differences: []checkDifferenceDoc{}, DifferencesTotal: r.DifferencesTotal}
	for _, mb := range r.Members {
		md := checkMemberDoc{Name: mb.Name, Endpoint: mb.Endpoint, ID: fmt.Sprintf("%x", mb.ID), Learner: mb.Learner,
			Revision: mb.Revision, Compared: mb.Compared, Problem: mb.Problem, State: mb.State}
		if mb.Hashed {
			h := int64(mb.Hash)
			md.Hash = &h
		}
		doc.Members = append(doc.Members, md)
	}
	for _, d := range r.Differences {
		dd := checkDifferenceDoc{Key: d.Key}
		for _, ks := range d.Members {
			dd.Members = append(dd.Members, checkKeyStateDoc(ks))
		}
		doc.Differences = append(doc.Differences, dd)
	}
	return doc
}

// checkProgress shows a check's progress on stderr: one line redrawn in
// place on a terminal, at most every 100 ms; otherwise a plain line every
// progressPlainEvery, so that a log shows a long check going on and a
// short one says nothing but its report.
type checkProgress struct {
	w     io.Writer
	tty   bool
	last  time.Time
	drawn bool
}

const progressPlainEvery = 5 * time.Second

func newCheckProgress(w io.Writer) *checkProgress {
	return &checkProgress{w: w, tty: cmdutil.IsTerminal(w), last: time.Now()}
}

func (l *checkProgress) show(p check.Progress) {
	every := progressPlainEvery
	if l.tty {
		every = 100 * time.Millisecond
	}
	if time.Since(l.last) < every {
		return
	}
	l.last = time.Now()
	line := "check members: " + p.Phase
	if p.Done > 0 {
		line += ": " + humanize.Comma(p.Done) + " keys"
		if p.Total > 0 {
			line += fmt.Sprintf(" of about %s (%.0f%%)", humanize.Comma(p.Total), 100*float64(p.Done)/float64(p.Total))
		}
	}
	if l.tty {
		fmt.Fprint(l.w, "\r\x1b[K"+line)
		l.drawn = true
		return
	}
	fmt.Fprintln(l.w, line)
}

// clear erases the terminal's progress line before the report prints.
func (l *checkProgress) clear() {
	if l.drawn {
		fmt.Fprint(l.w, "\r\x1b[K")
	}
}
