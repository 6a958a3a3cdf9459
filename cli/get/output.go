package get

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/etcdscope/etcdscope/cli/cmdutil"
	"github.com/etcdscope/etcdscope/decode"
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/printers"
)

// The -o formats of get beyond decode's and raw, spelled as kubectl's.
const (
	outputWide = "wide" // the table with the columns kubectl shows only with -o wide
	outputName = "name" // kind.group/name, one a line
)

// getFormats are get's -o formats without a value; getTemplateFormats
// take one after "=" (or, as kubectl's, from --template).
var (
	getFormats         = []string{decode.OutputYAML, decode.OutputJSON, cmdutil.OutputRaw, outputWide, outputName}
	getTemplateFormats = []string{"custom-columns", "custom-columns-file", "go-template", "go-template-file",
		"jsonpath", "jsonpath-file", "jsonpath-as-json", "template", "templatefile"}
)

// getOutputFlags are get's -o and the flags kubectl's get has beside it.
type getOutputFlags struct {
	*cmdutil.PrintFlags
	noHeaders bool
	// template and allowMissing are kubectl's --template and
	// --allow-missing-template-keys (cli-runtime's KubeTemplatePrintFlags).
	template     string
	allowMissing bool
}

func addGetOutputFlags(cmd *cobra.Command) *getOutputFlags {
	f := &getOutputFlags{}
	f.PrintFlags = cmdutil.AddPrintFlags(cmd, "", "output format: yaml, json, raw (one value), wide, name, custom-columns=SPEC, go-template=TEMPLATE, jsonpath=TEMPLATE, and the -file forms, as kubectl's (default: YAML for one object, a table for a list)",
		getFormats...)
	f.PrintFlags.Templated = getTemplateFormats
	cmd.Flags().BoolVar(&f.noHeaders, "no-headers", false, "print no header line in tables and custom columns")
	cmd.Flags().StringVar(&f.template, "template", "", "the template of -o go-template, -o jsonpath and their -file forms, as kubectl's")
	cmd.Flags().BoolVar(&f.allowMissing, "allow-missing-template-keys", true, "ignore a field or map key a jsonpath or go-template names that an object lacks")
	return f
}

// listOutput is how get prints what it lists, made from the flags before
// anything is read.
type listOutput struct {
	format    string // "" (the table), one of getFormats, formatColumns or formatTemplate
	noHeaders bool
	columns   []customColumn
	template  printers.ResourcePrinter
}

const (
	formatColumns  = "columns"
	formatTemplate = "template"
)

// table says whether the output is the table, -o wide's or the default.
func (o listOutput) table() bool { return o.format == "" || o.format == outputWide }

// listOutput checks -o and makes its printer: a template or a
// custom-columns spec that does not parse is an error here.
func (f *getOutputFlags) listOutput() (listOutput, error) {
	out := listOutput{format: f.Output, noHeaders: f.noHeaders}
	format, value, _ := strings.Cut(f.Output, "=")
	if f.template != "" {
		// kubectl's PrintFlags: --template gives the value, and alone
		// means -o go-template.
		value = f.template
		if format == "" {
			format = "go-template"
		}
	}
	switch format {
	case "custom-columns", "custom-columns-file":
		cols, err := parseCustomColumns(format, value)
		out.format, out.columns = formatColumns, cols
		return out, err
	case "jsonpath", "jsonpath-file", "jsonpath-as-json", "go-template", "go-template-file", "template", "templatefile":
		p, err := templatePrinter(format, value, f.allowMissing)
		out.format, out.template = formatTemplate, p
		return out, err
	}
	return out, nil
}

// templatePrinter is cli-runtime's printer of a jsonpath or go-template
// format, made as its JSONPathPrintFlags and GoTemplatePrintFlags make it,
// with their errors.
func templatePrinter(format, value string, allowMissing bool) (printers.ResourcePrinter, error) {
	if value == "" {
		return nil, errors.New("template format specified but no template given")
	}
	if strings.HasSuffix(format, "file") {
		data, err := os.ReadFile(value)
		if err != nil {
			return nil, fmt.Errorf("error reading --template %s, %v", value, err)
		}
		value = string(data)
	}
	if strings.HasPrefix(format, "jsonpath") {
		p, err := printers.NewJSONPathPrinter(value)
		if err != nil {
			return nil, fmt.Errorf("error parsing jsonpath %s, %v", value, err)
		}
		p.AllowMissingKeys(allowMissing)
		p.EnableJSONOutput(format == "jsonpath-as-json")
		return p, nil
	}
	p, err := printers.NewGoTemplatePrinter([]byte(value))
	if err != nil {
		return nil, fmt.Errorf("error parsing template %s, %v", value, err)
	}
	p.AllowMissingKeys(allowMissing)
	return p, nil
}
