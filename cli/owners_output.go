package cli

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/etcdscope/etcdscope/cli/cmdutil"
	"github.com/etcdscope/etcdscope/decode"
	"github.com/etcdscope/etcdscope/etcdview/owners"
	"k8s.io/apimachinery/pkg/util/duration"
)

// printOwnerTree prints the tree of id: drawn as kubectl-tree draws it,
// with the key, revision, age and deletion state of each object, or as a
// JSON document of nested dependents.
func printOwnerTree(pr cmdutil.Printer, g *owners.Graph, id owners.ID, rev int64) error {
	roots := g.Tree(id)
	if pr.Output == decode.OutputJSON {
		docs := make([]ownerNodeDoc, len(roots))
		for i, r := range roots {
			docs[i] = ownerNodeOf(g, r)
		}
		return writeDocInert(pr, ownerTreeDoc{Revision: rev, Roots: docs})
	}
	now := time.Now()
	return writeAligned(pr.Out, func(tw io.Writer) {
		fmt.Fprintln(tw, "NAMESPACE\tNAME\tREVISION\tAGE\tKEY\tSTATE")
		for _, r := range owners.Rows(roots) {
			writeTreeRow(tw, pr.P, g, r, now)
		}
	})
}

// writeTreeRow writes the cells of one row of the tree.
func writeTreeRow(tw io.Writer, p cmdutil.Palette, g *owners.Graph, r owners.Row, now time.Time) {
	o := g.Object(r.ID)
	revision, age, key := "-", "-", "-"
	if !g.Virtual(r.ID) {
		revision, key = strconv.FormatInt(o.Revision, 10), p.Text(decode.EscapeKey(o.Key))
	}
	if !o.Created.IsZero() {
		age = duration.HumanDuration(now.Sub(o.Created))
	}
	fmt.Fprintf(tw, "%s\t%s%s\t%s\t%s\t%s\t%s\n", p.Text(o.Namespace), r.Indent, p.Text(o.Ident()),
		revision, age, key, p.Text(g.State(r)))
}

// writeAligned lays out the tab-separated rows rows writes as kubectl's
// tabwriter does (padding 3), and writes them to w without the spaces an
// empty last cell leaves at the end of a line.
func writeAligned(w io.Writer, rows func(tw io.Writer)) error {
	var buf bytes.Buffer
	tw := tabwriter.NewWriter(&buf, 0, 8, 3, ' ', 0)
	rows(tw)
	if err := tw.Flush(); err != nil {
		return err
	}
	var out []byte
	for line := range bytes.Lines(buf.Bytes()) {
		out = append(append(out, bytes.TrimRight(line, " \n")...), '\n')
	}
	_, err := w.Write(out)
	return err
}

// ownerTreeDoc is the tree of -o json.
type ownerTreeDoc struct {
	Revision int64          `json:"revision"`
	Roots    []ownerNodeDoc `json:"roots"`
}

// ownerNodeDoc is one node of the tree of -o json.
type ownerNodeDoc struct {
	APIVersion        string     `json:"apiVersion,omitempty"`
	Kind              string     `json:"kind"`
	Namespace         string     `json:"namespace,omitempty"`
	Name              string     `json:"name"`
	UID               string     `json:"uid"`
	Key               string     `json:"key,omitempty"`
	Revision          int64      `json:"revision,omitempty"`
	CreationTimestamp *time.Time `json:"creationTimestamp,omitempty"`
	DeletionTimestamp *time.Time `json:"deletionTimestamp,omitempty"`
	Finalizers        []string   `json:"finalizers,omitempty"`
	// Missing is an owner no object has, known from references alone.
	Missing bool `json:"missing,omitempty"`
	Target  bool `json:"target,omitempty"`
	// Repeated is a node shown above, not expanded again.
	Repeated bool `json:"repeated,omitempty"`
	// Reference is the node's ownerReference to the node above it.
	Reference  *ownerRefDoc   `json:"reference,omitempty"`
	Dependents []ownerNodeDoc `json:"dependents,omitempty"`
}

type ownerRefDoc struct {
	Controller         bool   `json:"controller"`
	BlockOwnerDeletion bool   `json:"blockOwnerDeletion"`
	State              string `json:"state"`
}

func ownerNodeOf(g *owners.Graph, n *owners.TreeNode) ownerNodeDoc {
	o := g.Object(n.ID)
	d := ownerNodeDoc{
		APIVersion: o.APIVersion, Kind: o.Kind, Namespace: o.Namespace, Name: o.Name, UID: o.UID,
		Key: o.Key, Revision: o.Revision, Finalizers: o.Finalizers,
		Missing: g.Virtual(n.ID), Target: n.Target, Repeated: n.Repeated,
	}
	if !o.Created.IsZero() {
		d.CreationTimestamp = &o.Created
	}
	if o.Deleting() {
		d.DeletionTimestamp = &o.Deleted
	}
	if l := n.Link; l != nil {
		d.Reference = &ownerRefDoc{Controller: l.Ref.Controller, BlockOwnerDeletion: l.Ref.BlockOwnerDeletion, State: l.State.String()}
	}
	for _, c := range n.Children {
		d.Dependents = append(d.Dependents, ownerNodeOf(g, c))
	}
	return d
}

// printFindings prints the graph's findings in namespace ns ("" for
// all): a table with one line of why each, or JSON.
func printFindings(pr cmdutil.Printer, g *owners.Graph, rev int64, ns string) error {
	docs := []ownerFindingDoc{}
	for _, f := range g.Findings() {
		o := g.Object(f.ID)
		if ns != "" && o.Namespace != ns {
			continue
		}
		docs = append(docs, ownerFindingDoc{
			Namespace: o.Namespace, APIVersion: o.APIVersion, Kind: o.Kind, Name: o.Name, UID: o.UID,
			Key: o.Key, Revision: o.Revision, Problem: string(f.Problem), Why: f.Why,
		})
	}
	if pr.Output == decode.OutputJSON {
		return writeDocInert(pr, ownerFindingsDoc{Revision: rev, Findings: docs})
	}
	if len(docs) == 0 {
		fmt.Fprintf(pr.ErrOut, "No orphans, invalid owner references or blocked deletions at revision %d.\n", rev)
		return nil
	}
	return writeAligned(pr.Out, func(tw io.Writer) {
		fmt.Fprintln(tw, "NAMESPACE\tOBJECT\tPROBLEM\tREVISION\tKEY\tWHY")
		for _, d := range docs {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\n", pr.P.Text(d.Namespace), pr.P.Text(d.Kind+"/"+d.Name), d.Problem,
				d.Revision, pr.P.Text(decode.EscapeKey(d.Key)), pr.P.Text(d.Why))
		}
	})
}

// ownerFindingsDoc is --orphans -o json.
type ownerFindingsDoc struct {
	Revision int64             `json:"revision"`
	Findings []ownerFindingDoc `json:"findings"`
}

type ownerFindingDoc struct {
	Namespace  string `json:"namespace,omitempty"`
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Name       string `json:"name"`
	UID        string `json:"uid"`
	Key        string `json:"key"`
	Revision   int64  `json:"revision"`
	Problem    string `json:"problem"`
	Why        string `json:"why"`
}

// writeDocInert writes v as writeDoc does, inert on a terminal.
func writeDocInert(pr cmdutil.Printer, v any) error {
	w := pr.P.Writer(pr.Out)
	if err := cmdutil.WriteDoc(w, pr.Output, v); err != nil {
		return err
	}
	return w.Flush()
}
