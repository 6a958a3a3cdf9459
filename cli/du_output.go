package cli

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/etcdscope/etcdscope/cli/cmdutil"
	"github.com/etcdscope/etcdscope/etcdview"
	"github.com/etcdscope/etcdscope/etcdview/space"
)

// duView is what du prints: the report, the rates measured beside it, the
// forecast and the findings, each level ordered by a measure.
type duView struct {
	*space.Report
	by       space.Measure
	rates    *space.Rates // nil: none measured (a data file)
	forecast *space.Forecast
	findings []space.Finding
	// kine names a live kine, "" for etcd: kine keeps no version of a
	// key (its writes since creation) and no quota, which du then says.
	kine string
}

// minRateOver is the shortest measurement whose rates du shows: the rate
// columns of a read over a few hundred milliseconds would be noise.
const minRateOver = time.Second

func (v duView) showRates() bool { return v.rates != nil && v.rates.Over >= minRateOver }

// print writes the table of levels, then the top lists, the members, the
// data file's layout and the guidance, as kubectl and etcdctl print tables:
// humanized bytes, percentages, names as etcd holds them (inert on a
// terminal).
func (v duView) print(w io.Writer, p cmdutil.Palette) error {
	v.header(w, p)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	cols := []string{"NAME", "KEYS", "SIZE", "%PARENT", "%TOTAL", "WRITES"}
	if v.History {
		cols = append(cols, "REVISIONS", "HISTORY", "DELETIONS")
	}
	if v.showRates() {
		cols = append(cols, "REV/S", "BYTES/S")
	}
	fmt.Fprintln(tw, strings.Join(cols, "\t"))
	v.rows(tw, p, v.Root)
	if err := tw.Flush(); err != nil {
		return err
	}
	v.topLists(w, p)
	v.members(w, p)
	v.layout(w, p)
	fmt.Fprintln(w)
	if len(v.findings) == 0 {
		fmt.Fprintln(w, "GUIDANCE: nothing stands out")
		return nil
	}
	fmt.Fprintln(w, "GUIDANCE")
	for _, f := range v.findings {
		fmt.Fprintf(w, "%s: %s\n", p.Bold(f.Subject), p.Text(f.Text))
	}
	return nil
}

// rows prints n's row, then its children's, greatest first: at most --top
// of them (0: all), and one row for the rest.
func (v duView) rows(w io.Writer, p cmdutil.Palette, n *space.Node) {
	parent, total := space.Share(n, v.by, v.rates, v.History)
	// No colour in a table: tabwriter would count the escape codes in
	// the column's width.
	name := p.Text(n.Name)
	if n.Depth == 0 {
		name = p.Text(n.Path)
	}
	v.row(w, strings.Repeat("  ", n.Depth)+name, n.Stats, parent, total, v.rates.Of(n.Path))
	children := space.Sorted(n.Children, v.by, v.rates, v.History)
	if top := v.Options.Top; top > 0 && len(children) > top {
		var rest space.Stats
		var restParent, restTotal float64
		var restRate space.Rate
		for _, c := range children[top:] {
			rest = rest.Plus(c.Stats)
			cp, ct := space.Share(c, v.by, v.rates, v.History)
			restParent, restTotal = restParent+cp, restTotal+ct
			r := v.rates.Of(c.Path)
			restRate = space.Rate{Revisions: restRate.Revisions + r.Revisions, Bytes: restRate.Bytes + r.Bytes}
		}
		defer v.row(w, strings.Repeat("  ", n.Depth+1)+fmt.Sprintf("… %d more", len(children)-top), rest, restParent, restTotal, restRate)
		children = children[:top]
	}
	for _, c := range children {
		v.rows(w, p, c)
	}
}

func (v duView) row(w io.Writer, name string, s space.Stats, parent, total float64, r space.Rate) {
	row := []string{name, fmt.Sprint(s.Keys), ibytes(s.Bytes), percent(parent), percent(total), s.WritesText()}
	if v.History {
		row = append(row, fmt.Sprint(s.Revisions), ibytes(s.HeldBytes()), fmt.Sprint(s.Tombstones))
	}
	if v.showRates() {
		row = append(row, fmt.Sprintf("%.1f", r.Revisions), ibytes(int64(r.Bytes)))
	}
	fmt.Fprintln(w, strings.Join(row, "\t"))
}

// header says what was read, as of which revision, and what was not.
func (v duView) header(w io.Writer, p cmdutil.Palette) {
	source := v.Source
	if v.kine != "" {
		source = v.kine
	}
	fmt.Fprintf(w, "%s, revision %d", p.Text(source), v.Revision)
	if v.CompactRevision > 0 {
		fmt.Fprintf(w, ", compacted at %d", v.CompactRevision)
	}
	fmt.Fprintf(w, "; read in %v; shares of %s\n", v.Took.Round(time.Millisecond), sharesOf(v.by, v.History))
	if !v.History {
		fmt.Fprintln(w, "history: not read (--history replays the revisions etcd holds: a read of about its DB size in use)")
	}
	if v.rates != nil && !v.showRates() {
		fmt.Fprintf(w, "rates: measured over %v only (--rate-for measures longer)\n", v.rates.Over.Round(time.Millisecond))
	}
	if v.Capped > 0 {
		fmt.Fprintf(w, "%d keys are counted in a level above their own: the tree's %d nodes are its bound\n", v.Capped, v.Options.MaxNodes)
	}
	if v.forecast != nil && v.forecast.Urgent() {
		fmt.Fprintln(w, p.Removed("WARNING: "+v.forecast.String()))
	}
}

func sharesOf(m space.Measure, history bool) string {
	if m == space.ByRevisions && !history {
		return "writes since creation"
	}
	return string(m)
}

func (v duView) topLists(w io.Writer, p cmdutil.Palette) {
	if len(v.Root.Largest) > 0 {
		fmt.Fprintln(w)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "LARGEST\tSIZE\tVERSION\tMODIFIED")
		for _, k := range v.Root.Largest {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\n", p.Text(k.Key), ibytes(k.Size), space.VersionText(k.Version), k.ModRevision)
		}
		tw.Flush()
	}
	if v.kine != "" {
		fmt.Fprintln(w, "\nHOTTEST: not known: kine keeps no count of a key's writes (etcd's version); --history counts the revisions it holds")
	} else if len(v.Root.Hottest) > 0 {
		fmt.Fprintln(w)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "HOTTEST\tVERSION\tCREATED\tMODIFIED\t%WRITES SINCE CREATED")
		for _, k := range v.Root.Hottest {
			share := float64(k.Version) / float64(max(1, v.Revision-k.CreateRevision+1))
			fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s\n", p.Text(k.Key), k.Version, k.CreateRevision, k.ModRevision, percent(share))
		}
		tw.Flush()
	}
	if v.showRates() && len(v.rates.Keys) > 0 {
		fmt.Fprintln(w)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "HOTTEST OVER %v\tREV/S\tBYTES/S\n", v.rates.Over.Round(time.Second))
		for _, k := range v.rates.Keys {
			fmt.Fprintf(tw, "%s\t%.2f\t%s\n", p.Text(k.Key), k.Revisions, ibytes(int64(k.Bytes)))
		}
		tw.Flush()
	}
}

func (v duView) members(w io.Writer, p cmdutil.Palette) {
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "MEMBER\tENDPOINT\tDB SIZE\tIN USE\tRECLAIMABLE\tQUOTA\t%QUOTA\tALARMS")
	for _, m := range v.Members {
		if m.Err != nil {
			fmt.Fprintf(tw, "%s\t%s\t\t\t\t\t\t%s\n", p.Text(m.Name), p.Text(m.Endpoint), p.Removed("unreachable: "+m.Err.Error()))
			continue
		}
		inUse, free := "", ""
		if m.InUse > 0 {
			inUse, free = ibytes(m.InUse), fmt.Sprintf("%s (%s)", ibytes(m.Reclaimable()), percent(float64(m.Reclaimable())/float64(m.DBSize)))
		}
		name := p.Text(m.Name)
		quota, share := space.QuotaText(m)
		if m.Leader && v.kine == "" {
			name += " (leader)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", name, p.Text(m.Endpoint), ibytes(m.DBSize), inUse, free, quota, share,
			p.Removed(strings.Join(m.Alarms, ", ")))
	}
	tw.Flush()
	if v.kine != "" || len(v.Members) > 0 && v.Members[0].Quota == 0 {
		fmt.Fprintln(w, "kine has no quota: its database grows until the disk is full")
	}
	if v.forecast != nil {
		fmt.Fprintln(w, "forecast: "+p.Text(v.forecast.String()))
	}
}

// layout prints a data file's page usage and buckets.
func (v duView) layout(w io.Writer, p cmdutil.Palette) {
	l := v.Layout
	if l == nil {
		return
	}
	fmt.Fprintf(w, "\nfile: %s, %s pages of %d bytes (%s), %d free (%s, %s); the file is %s\n",
		p.Text(v.Members[0].Endpoint), humanize.Comma(l.Size/int64(l.PageSize)), l.PageSize, ibytes(l.Size),
		l.FreePages, ibytes(l.FreePages*int64(l.PageSize)), percent(float64(l.FreePages*int64(l.PageSize))/float64(max(1, l.Size))), ibytes(l.FileSize))
	if len(l.Buckets) == 0 {
		return // kine's SQLite file: its tables' pages are not counted
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "BUCKET\tKEYS\tPAGES\tALLOCATED\tIN USE")
	for _, b := range l.Buckets {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\n", p.Text(b.Name), b.Keys, b.Pages, ibytes(b.Allocated), ibytes(b.InUse))
	}
	tw.Flush()
}

func ibytes(n int64) string {
	if n < 0 {
		return "-" + humanize.IBytes(uint64(-n))
	}
	return humanize.IBytes(uint64(n))
}

func percent(f float64) string { return fmt.Sprintf("%.1f%%", 100*f) }

// doc is the report as du -o json prints it.
func (v duView) doc() map[string]any {
	d := map[string]any{
		"source": v.Source, "prefix": v.Root.Path, "revision": v.Revision, "compactRevision": v.CompactRevision,
		"history": v.History, "sort": v.by, "tookSeconds": v.Took.Seconds(), "tree": v.nodeDoc(v.Root),
		"largest": keysDoc(v.Root.Largest), "hottest": keysDoc(v.Root.Hottest), "members": membersDoc(v.Members),
		"guidance": findingsDoc(v.findings),
	}
	if v.kine != "" {
		d["server"] = v.kine
	}
	if v.Capped > 0 {
		d["cappedKeys"] = v.Capped
	}
	if v.rates != nil {
		keys := []map[string]any{}
		for _, k := range v.rates.Keys {
			keys = append(keys, map[string]any{"key": k.Key, "revisionsPerSecond": k.Revisions, "bytesPerSecond": k.Bytes})
		}
		d["rates"] = map[string]any{"overSeconds": v.rates.Over.Seconds(), "revisionsPerSecond": v.rates.Total.Revisions,
			"bytesPerSecond": v.rates.Total.Bytes, "hottest": keys}
	}
	if f := v.forecast; f != nil {
		fd := map[string]any{"member": f.Member, "usedBytes": f.Used, "quotaBytes": f.Quota, "full": f.Full,
			"growthBytesPerSecond": f.Growth.BytesPerSec, "growthBasis": f.Growth.Basis, "growthOverSeconds": f.Growth.Over.Seconds()}
		if f.Growing {
			fd["secondsLeft"] = f.Left.Seconds()
		}
		d["forecast"] = fd
	}
	if l := v.Layout; l != nil {
		d["layout"] = layoutDoc(l)
	}
	return d
}

func (v duView) nodeDoc(n *space.Node) map[string]any {
	parent, total := space.Share(n, v.by, v.rates, v.History)
	d := map[string]any{"name": n.Name, "path": n.Path, "role": n.Role, "keys": n.Keys, "bytes": n.Bytes, "writes": n.Writes,
		"shareOfParent": parent, "shareOfTotal": total}
	if n.WritesUnknown > 0 {
		// writes is then the other keys' alone.
		d["writesUnknown"] = n.WritesUnknown
	}
	if n.Group != "" {
		d["group"] = n.Group
	}
	if n.Resource != "" {
		d["resource"] = n.Resource
	}
	if v.History {
		d["revisions"], d["revisionBytes"], d["tombstones"], d["tombstoneBytes"] = n.Revisions, n.RevisionBytes, n.Tombstones, n.TombstoneBytes
	}
	if v.rates != nil {
		r := v.rates.Of(n.Path)
		d["revisionsPerSecond"], d["bytesPerSecond"] = r.Revisions, r.Bytes
	}
	if len(n.Children) > 0 {
		var children []map[string]any
		for _, c := range space.Sorted(n.Children, v.by, v.rates, v.History) {
			children = append(children, v.nodeDoc(c))
		}
		d["children"] = children
	}
	return d
}

func layoutDoc(l *etcdview.Layout) map[string]any {
	buckets := []map[string]any{}
	for _, b := range l.Buckets {
		buckets = append(buckets, map[string]any{"name": b.Name, "keys": b.Keys, "pages": b.Pages, "allocatedBytes": b.Allocated, "inUseBytes": b.InUse})
	}
	return map[string]any{"pageSize": l.PageSize, "size": l.Size, "fileSize": l.FileSize, "freePages": l.FreePages, "inUse": l.InUse, "buckets": buckets}
}

func keysDoc(ks []space.KeyStat) []map[string]any {
	out := []map[string]any{}
	for _, k := range ks {
		var version any = k.Version
		if k.Version <= 0 {
			version = nil // not kept (kine), or not known
		}
		out = append(out, map[string]any{"key": k.Key, "bytes": k.Size, "version": version,
			"createRevision": k.CreateRevision, "modRevision": k.ModRevision})
	}
	return out
}

func membersDoc(ms []space.Member) []map[string]any {
	out := []map[string]any{}
	for _, m := range ms {
		md := map[string]any{"name": m.Name, "endpoint": m.Endpoint, "leader": m.Leader, "dbSize": m.DBSize,
			"dbSizeInUse": m.InUse, "reclaimable": m.Reclaimable(), "quota": m.Quota, "alarms": m.Alarms}
		if m.Err != nil {
			md["unreachable"] = m.Err.Error()
		}
		out = append(out, md)
	}
	return out
}

func findingsDoc(fs []space.Finding) []map[string]any {
	out := []map[string]any{}
	for _, f := range fs {
		out = append(out, map[string]any{"subject": f.Subject, "text": f.Text})
	}
	return out
}
