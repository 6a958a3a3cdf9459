package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/etcdscope/etcdscope/cli/cmdutil"
	"github.com/etcdscope/etcdscope/decode"
	"github.com/etcdscope/etcdscope/etcdview"
	"github.com/spf13/cobra"
)

// A checkSpec is one of `etcdscope check`'s checks: a subcommand of its own
// (`check members`), and a part of `check`, which runs them all.
type checkSpec struct {
	name  string // its subcommand, and its key in check -o json
	short string
	long  string
	// flags adds the check's own flags to cmd; check itself carries the
	// flags of every check.
	flags func(cmd *cobra.Command)
	// run runs the check on src. An error is a check that could not run
	// (a refused connection); what the check found is in the report.
	run func(ctx context.Context, cmd *cobra.Command, src etcdview.Source) (checkReport, error)
}

// A checkReport is what one check found.
type checkReport interface {
	// Failed is true when the check found what the user must act on:
	// members that disagree, values the write key does not cover.
	Failed() bool
	// Summary is one line: "members: 3 members agree at revision 1234".
	Summary() string
	// WriteText prints the whole report for a person, inert.
	WriteText(w io.Writer, p cmdutil.Palette) error
	// Doc is the report in check -o json.
	Doc() any
}

// errCheckFailed is the error of a check that ran and found a problem:
// exit status 1, with the summaries of the failed checks.
var errCheckFailed = errors.New("check failed")

// outputText is check's default -o: the reports, for a person.
const outputText = "text"

// checks is the list of every check, in the order check runs them.
func checks(conn *cmdutil.ConnFlags) []checkSpec {
	return []checkSpec{
		membersCheck(),
	}
}

func newCheckCmd(conn *cmdutil.ConnFlags) *cobra.Command {
	all := checks(conn)
	var output *cmdutil.PrintFlags
	names := make([]string, len(all))
	for i, c := range all {
		names[i] = c.name
	}
	cmd := &cobra.Command{
		Use:   "check [" + strings.Join(names, "|") + "] [-o text|json|yaml]",
		Short: "Run the checks of an incident: " + strings.Join(names, ", ") + "; exit 1 when one fails",
		Long: `check runs every check it has, one after the other, and exits with status 1
when one of them found a problem; check NAME runs one. Each check only reads.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runChecks(cmd, conn, output, all)
		},
	}
	output = cmdutil.AddPrintFlags(cmd, outputText, "text, json or yaml", outputText, decode.OutputJSON, decode.OutputYAML)
	for _, c := range all {
		c.flags(cmd)
		sub := &cobra.Command{
			Use:   c.name + " [-o text|json|yaml]",
			Short: c.short,
			Long:  c.long,
			Args:  cobra.NoArgs,
		}
		var subOutput *cmdutil.PrintFlags
		sub.RunE = func(cmd *cobra.Command, _ []string) error {
			return runChecks(cmd, conn, subOutput, []checkSpec{c})
		}
		subOutput = cmdutil.AddPrintFlags(sub, outputText, "text, json or yaml", outputText, decode.OutputJSON, decode.OutputYAML)
		c.flags(sub)
		cmd.AddCommand(sub)
	}
	return cmd
}

// runChecks runs each of specs on one source and prints their reports:
// as text, one after the other, or as one JSON (YAML) object keyed by name.
func runChecks(cmd *cobra.Command, conn *cmdutil.ConnFlags, output *cmdutil.PrintFlags, specs []checkSpec) error {
	pr, err := output.ToPrinter(cmd)
	if err != nil {
		return err
	}
	return cmdutil.WithSource(cmd.Context(), conn, func(src etcdview.Source) error {
		var failed []string
		doc := map[string]any{}
		for i, c := range specs {
			r, err := c.run(cmd.Context(), cmd, src)
			if err != nil {
				return fmt.Errorf("check %s: %w", c.name, err)
			}
			if r.Failed() {
				failed = append(failed, r.Summary())
			}
			if pr.Output != outputText {
				doc[c.name] = r.Doc()
				continue
			}
			if i > 0 {
				fmt.Fprintln(pr.Out)
			}
			if err := r.WriteText(pr.Out, pr.P); err != nil {
				return err
			}
		}
		if pr.Output != outputText {
			w := pr.P.Writer(pr.Out)
			if err := cmdutil.WriteDoc(w, pr.Output, doc); err != nil {
				return err
			}
			if err := w.Flush(); err != nil {
				return err
			}
		}
		if len(failed) > 0 {
			return fmt.Errorf("%w: %s", errCheckFailed, strings.Join(failed, "; "))
		}
		return nil
	})
}
