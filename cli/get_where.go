package cli

import (
	"fmt"
	"sync"

	"github.com/etcdscope/etcdscope/decode"
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

// whereCounts is --where in a listing, shared by the workers: how many
// objects it was evaluated on, how many it could not be, and the first of
// those in key order.
type whereCounts struct {
	filter *where.Filter

	mu        sync.Mutex
	evaluated int
	skipped   int
	firstKey  string
	firstName string // NAMESPACE/NAME, or NAME
	firstErr  error
}

// keep says whether the object at key, as served, passes the filter; an
// object the filter cannot be evaluated on is counted and left out, as
// kubectl leaves out a missing key of a jsonpath.
func (w *whereCounts) keep(key string, served map[string]any) bool {
	ok, err := w.filter.Match(served)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.evaluated++
	if err != nil {
		w.skipped++
		// Workers finish chunks out of order; keys come in order.
		if w.firstErr == nil || key < w.firstKey {
			w.firstKey, w.firstName, w.firstErr = key, nameOf(served), err
		}
	}
	return ok && err == nil
}

// report ends a listing: nothing when the filter was evaluated on every
// object; a warning when on some; an error (exit status 1) when on none,
// which is a field misspelt far more often than a cluster where no object
// has it: a script must not take "No resources found" for an answer, as
// it does not from kubectl's --field-selector on a field it cannot select.
func (w *whereCounts) report(pr printer) error {
	if w == nil || w.skipped == 0 {
		return nil
	}
	// The name, and values the reason may quote, come from etcd.
	msg := decode.Inert(fmt.Sprintf("--where skipped %d objects it could not evaluate (first: %s: %v)", w.skipped, w.firstName, w.firstErr))
	if w.skipped == w.evaluated {
		return fmt.Errorf("%s, every one it read", msg)
	}
	fmt.Fprintln(pr.errOut, pr.ep.text("etcdscope: "+msg))
	return nil
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
