package get

import (
	"bufio"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/etcdscope/etcdscope/cli/cmdutil"
	"github.com/etcdscope/etcdscope/decode"
	"github.com/etcdscope/etcdscope/etcdview"
)

// printObjectTable is get --keys: the keys of a resource with their
// revisions and version, read without their values.
func printObjectTable(s cmdutil.Printer, res decode.Resource, keys []etcdview.KV) error {
	if len(keys) == 0 {
		fmt.Fprintf(s.ErrOut, "No %s found.\n", res.Resource)
		return nil
	}
	// The columns are laid out as kubectl's tabwriter (padding 3) lays them
	// out, in two passes over the rows: tabwriter would keep every cell of
	// a 100k-row table in its own buffers until the end, and cost a third
	// of the command.
	header := []string{"NAME", "REVISION", "CREATED AT", "VERSION"}
	if res.Namespaced {
		header = append([]string{"NAMESPACE"}, header...)
	}
	type cells struct{ namespace, name string } // palette.cell's
	rows, widths := make([]cells, len(keys)), make([]int, len(header))
	for i, h := range header {
		widths[i] = len(h)
	}
	var num [20]byte
	numWidth := func(col int, n int64) {
		widths[col] = max(widths[col], len(strconv.AppendInt(num[:0], n, 10)))
	}
	for i, kv := range keys {
		k := decode.ParseKey(kv.Key)
		name := k.Name
		if !k.IsObject {
			name = k.String()
		}
		rows[i] = cells{s.P.Cell(k.Namespace), s.P.Cell(name)}
		col := 0
		if res.Namespaced {
			widths[0] = max(widths[0], utf8.RuneCountInString(rows[i].namespace))
			col = 1
		}
		widths[col] = max(widths[col], utf8.RuneCountInString(rows[i].name))
		numWidth(col+1, kv.ModRevision)
		numWidth(col+2, kv.CreateRevision)
	}
	// padCell pads the cell that starts at b[start:] to its column's width
	// and the padding.
	const padding = 3
	padCell := func(b []byte, start, width int) []byte {
		for range width - utf8.RuneCount(b[start:]) + padding {
			b = append(b, ' ')
		}
		return b
	}
	// One write per 64 KiB, not per row: a list of 100k pods otherwise
	// costs 100k write calls.
	out := bufio.NewWriterSize(s.Out, 64<<10)
	var row []byte
	cell := func(col int, text string) {
		start := len(row)
		row = padCell(append(row, text...), start, widths[col])
	}
	numCell := func(col int, n int64) {
		start := len(row)
		row = padCell(strconv.AppendInt(row, n, 10), start, widths[col])
	}
	for i, h := range header[:len(header)-1] {
		cell(i, h)
	}
	out.Write(append(append(row, header[len(header)-1]...), '\n'))
	for i, kv := range keys {
		row = row[:0]
		col := 0
		if res.Namespaced {
			cell(0, rows[i].namespace)
			col = 1
		}
		cell(col, rows[i].name)
		numCell(col+1, kv.ModRevision)
		numCell(col+2, kv.CreateRevision)
		row = append(strconv.AppendInt(row, kv.Version, 10), '\n')
		if _, err := out.Write(row); err != nil {
			return err
		}
	}
	return out.Flush()
}
