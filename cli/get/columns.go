package get

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"strings"

	"github.com/etcdscope/etcdscope/cli/cmdutil"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/client-go/util/jsonpath"
)

// -o custom-columns, as kubectl's get.CustomColumnsPrinter prints it. That
// printer lives in k8s.io/kubectl/pkg/cmd/get, whose package init (its
// help texts) costs 15 ms at every start of etcdscope; this one follows it
// and get_columns_test.go holds the two to the same output.

// customColumn is one column: its header, and the JSONPath of its cells.
type customColumn struct {
	header string
	path   string // in braces, as relaxedJSONPath makes it
}

// parseCustomColumns reads custom-columns=HEADER:PATH,... or
// custom-columns-file=FILE (a line of headers, a line of paths), with
// kubectl's errors.
func parseCustomColumns(format, value string) ([]customColumn, error) {
	if value == "" {
		return nil, fmt.Errorf("custom-columns format specified but no custom columns given")
	}
	var headers, paths []string
	if format == "custom-columns-file" {
		var err error
		if headers, paths, err = readColumnsFile(value); err != nil {
			return nil, err
		}
	} else {
		for _, part := range strings.Split(value, ",") {
			header, path, ok := strings.Cut(part, ":")
			if !ok {
				return nil, fmt.Errorf("unexpected custom-columns spec: %s, expected <header>:<json-path-expr>", part)
			}
			headers, paths = append(headers, header), append(paths, path)
		}
	}
	cols := make([]customColumn, len(headers))
	for i := range headers {
		path, err := relaxedJSONPath(paths[i])
		if err != nil {
			return nil, err
		}
		if err := jsonpath.New(headers[i]).Parse(path); err != nil {
			return nil, fmt.Errorf("custom-columns %s: %w", headers[i], err)
		}
		cols[i] = customColumn{header: headers[i], path: path}
	}
	return cols, nil
}

func readColumnsFile(name string) (headers, paths []string, err error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, nil, fmt.Errorf("error reading template %s, %v", name, err)
	}
	sc := bufio.NewScanner(strings.NewReader(string(data)))
	if !sc.Scan() {
		return nil, nil, fmt.Errorf("invalid template, missing header line. Expected format is one line of space separated headers, one line of space separated column specs.")
	}
	headers = strings.Fields(sc.Text())
	if !sc.Scan() {
		return nil, nil, fmt.Errorf("invalid template, missing spec line. Expected format is one line of space separated headers, one line of space separated column specs.")
	}
	paths = strings.Fields(sc.Text())
	if len(headers) != len(paths) {
		return nil, nil, fmt.Errorf("number of headers (%d) and field specifications (%d) don't match", len(headers), len(paths))
	}
	return headers, paths, nil
}

// relaxedPath is what kubectl's RelaxedJSONPathExpression accepts: a path
// with or without its leading dot, with or without braces.
var relaxedPath = regexp.MustCompile(`^\{\.?([^{}]+)\}$|^\.?([^{}]+)$`)

// relaxedJSONPath is path as a JSONPath template, "{.a.b}".
func relaxedJSONPath(path string) (string, error) {
	if path == "" {
		return "", nil
	}
	m := relaxedPath.FindStringSubmatch(path)
	if m == nil {
		return "", fmt.Errorf("unexpected path string, expected a 'name1.name2' or '.name1.name2' or '{name1.name2}' or '{.name1.name2}'")
	}
	if m[1] != "" {
		return "{." + m[1] + "}", nil
	}
	return "{." + m[2] + "}", nil
}

// columnParsers are the columns' JSONPaths, parsed: a JSONPath keeps state
// while it runs, so each worker has its own.
func columnParsers(cols []customColumn) []*jsonpath.JSONPath {
	ps := make([]*jsonpath.JSONPath, len(cols))
	for i, c := range cols {
		ps[i] = jsonpath.New(c.header).AllowMissingKeys(true)
		ps[i].Parse(c.path) // parsed once already by parseCustomColumns
	}
	return ps
}

// appendColumnsRow appends the row of content (an object as unstructured
// content): each cell its values joined by ",", "<none>" when there are
// none, escaped as kubectl escapes them, and text made inert on a terminal.
func appendColumnsRow(dst []byte, ps []*jsonpath.JSONPath, content map[string]any, p cmdutil.Palette) ([]byte, error) {
	for i, parser := range ps {
		values, err := parser.FindResults(content)
		if err != nil {
			return dst, err
		}
		if i > 0 {
			dst = append(dst, '\t')
		}
		if len(values) == 0 || len(values[0]) == 0 {
			dst = append(dst, "<none>"...)
			continue
		}
		first := true
		for _, vs := range values {
			for _, v := range vs {
				if !first {
					dst = append(dst, ',')
				}
				first = false
				dst = append(dst, cmdutil.CapCell(printers.EscapeTerminal(p.Text(fmt.Sprint(v.Interface()))))...)
			}
		}
	}
	return append(dst, '\n'), nil
}

// columnsHeader is the header line: the headers as given.
func columnsHeader(cols []customColumn) []byte {
	var b []byte
	for i, c := range cols {
		if i > 0 {
			b = append(b, '\t')
		}
		b = append(b, c.header...)
	}
	return append(b, '\n')
}
