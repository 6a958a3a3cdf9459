package get

import (
	"fmt"

	"github.com/etcdscope/etcdscope/cli/cmdutil"
	"github.com/etcdscope/etcdscope/decode/where"
)

// compileWhere is --where's filter, nil without one; a syntax error says
// where it is.
func compileWhere(expr string) (*where.Filter, error) {
	if expr == "" {
		return nil, nil
	}
	f, err := where.Compile(expr)
	if err != nil {
		return nil, fmt.Errorf("--where: %w", err)
	}
	return f, nil
}

// whereCounts is --where in a listing, shared by the workers: the objects
// it was evaluated on, and those it could not be.
type whereCounts struct {
	filter *where.Filter
	skipCounts
}

// keep says whether the object at key, as served, passes the filter; an
// object the filter cannot be evaluated on is counted and left out, as
// kubectl leaves out a missing key of a jsonpath.
func (w *whereCounts) keep(key string, served map[string]any) bool {
	ok, err := w.filter.Match(served)
	w.count(key, nameOf(served), err)
	return ok && err == nil
}

// report ends a listing as skipCounts' does: an error when the filter
// could be evaluated on no object, which is a field misspelt far more often
// than a cluster where no object has it, as kubectl's --field-selector
// fails on a field it cannot select.
func (w *whereCounts) report(pr cmdutil.Printer) error {
	if w == nil {
		return nil
	}
	return w.skipCounts.report(pr, fmt.Sprintf("--where skipped %d objects it could not evaluate", w.skipped))
}

// nameOf is NAMESPACE/NAME of a served object, NAME when it has no
// namespace.
func nameOf(served map[string]any) string {
	md, _ := served["metadata"].(map[string]any)
	name, _ := md["name"].(string)
	if ns, _ := md["namespace"].(string); ns != "" {
		return ns + "/" + name
	}
	return name
}
