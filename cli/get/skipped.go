package get

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/etcdscope/etcdscope/cli/cmdutil"
	"github.com/etcdscope/etcdscope/decode"
)

// skipCounts counts what a listing read of something, and what it left
// out for an error (a value that does not decode, an object --where cannot
// be evaluated on), shared by the workers; it keeps the first left out in
// key order for the line that reports them.
type skipCounts struct {
	read atomic.Int64

	mu        sync.Mutex
	skipped   int
	firstKey  string
	firstName string // what the report calls it: a key, NAMESPACE/NAME
	firstErr  error
}

// count counts one object read at key, left out when err is not nil.
func (s *skipCounts) count(key, name string, err error) {
	s.read.Add(1)
	if err != nil {
		s.skip(key, name, err)
	}
}

// skip counts the object at key, already counted as read, as left out.
func (s *skipCounts) skip(key, name string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.skipped++
	// Workers finish chunks out of order; keys come in order.
	if s.firstErr == nil || key < s.firstKey {
		s.firstKey, s.firstName, s.firstErr = key, name, err
	}
}

// all says whether every object read was left out, and at least one was.
func (s *skipCounts) all() bool {
	return s != nil && s.skipped > 0 && int64(s.skipped) == s.read.Load()
}

// report ends a listing, what saying what was left out ("3 values could
// not be decoded"): nothing when nothing was; a line on stderr when some
// objects were; an error (exit status 1) when every one was, so that a
// script does not take an empty listing for an answer. The first's name
// and error quote etcd's data: inert wherever they go.
func (s *skipCounts) report(pr cmdutil.Printer, what string) error {
	if s == nil || s.skipped == 0 {
		return nil
	}
	msg := decode.Inert(fmt.Sprintf("%s (first: %s: %v)", what, s.firstName, s.firstErr))
	if s.all() {
		return fmt.Errorf("%s, every one it read", msg)
	}
	fmt.Fprintln(pr.ErrOut, pr.EP.Text("etcdscope: "+msg))
	return nil
}

// undecoded counts the values a listing could not make objects of:
// they are left out, as kubectl's listings show every object they can.
type undecoded struct{ skipCounts }

// object counts o as read, and says whether it is an object: one that is
// not (text, binary, a value that does not parse) is counted as left out.
func (u *undecoded) object(o decode.Object) (ok bool) {
	u.read.Add(1)
	if o.Object != nil {
		return true
	}
	why := o.Problem
	if why == "" {
		why = o.Label() + ": not a Kubernetes object"
	}
	u.fail(o.Key.Raw, errors.New(why))
	return false
}

// fail counts the value at key, already read, as one that could not be
// listed.
func (u *undecoded) fail(key string, err error) {
	u.skip(key, decode.EscapeKey(key), err)
}

func (u *undecoded) report(pr cmdutil.Printer) error {
	what := fmt.Sprintf("%d values could not be decoded", u.skipped)
	if u.skipped == 1 {
		what = "1 value could not be decoded"
	}
	return u.skipCounts.report(pr, what)
}

// valueError is an error about the value at key, which may quote what the
// value holds: inert wherever it is printed.
type valueError struct {
	key string
	err error
}

func (e valueError) Error() string {
	return decode.Inert(decode.EscapeKey(e.key) + ": " + e.err.Error())
}

func (e valueError) Unwrap() error { return e.err }
