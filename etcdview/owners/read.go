package owners

import (
	"context"
	"fmt"
	"time"

	"github.com/etcdscope/etcdscope/decode"
	"github.com/etcdscope/etcdscope/etcdview"
)

// Options say how Read reads, beside the source and revision.
type Options struct {
	// Timeout bounds each read (the top level, then each page) rather
	// than the whole walk, as a screen's reads time out one by one; 0
	// leaves only ctx.
	Timeout time.Duration
	// Pinned, when not nil, is called with the revision the graph is of
	// once the first read has pinned it, before any value is read: the
	// CLI checks there that its target exists, before it reads the whole
	// store for it. An error it returns ends the read, and Read returns
	// it as it is.
	Pinned func(rev int64) error
	// Progress, when not nil, is told after each page how many values
	// were read so far.
	Progress func(read int64)
}

// ReadError is a page of a directory that could not be read.
type ReadError struct {
	Prefix   string
	Revision int64
	Err      error
}

func (e *ReadError) Error() string {
	return fmt.Sprintf("read %s at revision %d: %v", e.Prefix, e.Revision, e.Err)
}

func (e *ReadError) Unwrap() error { return e.Err }

// Read is the graph of every object stored below decode.DefaultPrefix as of
// rev (0: the newest), and the revision it is of: the one the level below
// the prefix was read at, pinned for every page after it. Values come a
// page at a time and only their metadata stays, so memory grows with the
// number of objects, not with their size. Events are passed over, as the
// garbage collector passes them over (its ignoredResources), and they are
// most of a busy cluster's keys. The error of the top level's read is
// returned as it is; a page's is a *ReadError.
func Read(ctx context.Context, src etcdview.Source, dec decode.Decoder, rev int64, opts Options) (*Graph, int64, error) {
	top, err := opts.top(ctx, src, rev)
	if err != nil {
		return nil, 0, err
	}
	rev = top.Revision
	if opts.Pinned != nil {
		if err := opts.Pinned(rev); err != nil {
			return nil, rev, err
		}
	}
	b := Builder{Decoder: dec}
	var read int64
	for _, c := range top.Children {
		if !c.Dir || Ignored(decode.ParseKey(c.Prefix)) {
			continue
		}
		pages := etcdview.Pages(src, c.Prefix, rev, etcdview.Paging{Values: true, Timeout: opts.Timeout})
		err := pages(ctx, func(p etcdview.Page) error {
			for _, kv := range p.Keys {
				b.Add(kv.Key, kv.Value, kv.ModRevision)
			}
			read += int64(len(p.Keys))
			if opts.Progress != nil {
				opts.Progress(read)
			}
			return nil
		})
		if err != nil {
			return nil, rev, &ReadError{Prefix: c.Prefix, Revision: rev, Err: err}
		}
	}
	return b.Graph(), rev, nil
}

// top is the level below the prefix as of rev, read within the timeout.
func (o Options) top(ctx context.Context, src etcdview.Source, rev int64) (etcdview.Level, error) {
	if o.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.Timeout)
		defer cancel()
	}
	return src.Children(ctx, decode.DefaultPrefix+"/", rev)
}
