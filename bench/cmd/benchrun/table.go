package main

import (
	"fmt"
	"io"
	"strings"
)

// row is one line of the table: a figure, etcdscope's value, what it is
// compared with, their ratio and whether the goal is met.
type row struct {
	figure   string
	ours     string
	theirs   string // "—" when the figure has nothing to compare with
	ratio    string // "—" when there is no ratio
	goal     string
	met      bool
	measured bool // false when the figure failed to run; ours says why
}

func printTable(w io.Writer, rows []row) {
	fmt.Fprintln(w, "| figure | etcdscope | compared with | ratio | goal | met |")
	fmt.Fprintln(w, "| --- | --- | --- | --- | --- | --- |")
	for _, r := range rows {
		met := "no"
		switch {
		case !r.measured:
			met = "not measured"
		case r.met:
			met = "yes"
		}
		cells := []string{r.figure, r.ours, orDash(r.theirs), orDash(r.ratio), r.goal, met}
		fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
	}
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

func ms(seconds float64) string { return fmt.Sprintf("%.0f ms", seconds*1000) }

// failed is the row of a figure that could not be measured.
func failed(figure, goal string, err error) row {
	return row{figure: figure, ours: "error: " + strings.ReplaceAll(err.Error(), "\n", " "), goal: goal}
}
