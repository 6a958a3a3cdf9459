package etcdview

import (
	"context"
	"fmt"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// ranger reads one key range as of one revision: the single read Children,
// List and Get are built on, so that the live and the offline Source share
// them.
type ranger interface {
	rangeKeys(ctx context.Context, r rangeRequest) (rangeResult, error)
}

// rangeRequest is etcd's RangeRequest, reduced to what etcdview asks.
type rangeRequest struct {
	key string
	// end is etcd's range_end: "" for key alone, "\x00" for every key from
	// key on, otherwise the first key past the range.
	end       string
	rev       int64
	limit     int64 // 0 means no limit
	keysOnly  bool
	countOnly bool
	// uncounted says the caller needs neither count nor an exact more:
	// etcd counts every key of a range it is asked for, however small the
	// limit (a walk of its index over the whole range), unless the range
	// comes through RangeStream (etcd 3.7 and later), which Live then uses.
	uncounted bool
}

type rangeResult struct {
	kvs   []KV
	count int64 // keys in the range, as count-only asks for
	more  bool  // limit left keys out (uncounted: may have)
	rev   int64 // the revision read at
	// counted says etcd counted the whole range to answer an uncounted
	// request (a Range, before etcd 3.7), or kine read and sorted it: what
	// it cost grew with the keys in the range, not with the limit.
	counted bool
	// ahead says the server is kine, where ranges read at the same time
	// cost little more than one alone (a round trip each, through
	// SQLite), and where a range reads every key between its ends
	// however few it returns, as counted ones do: the skip-scan reads
	// some ahead (scan.nextBatch).
	ahead bool
}

// prefixRange is the range of every key that starts with prefix, as etcdctl
// --prefix builds it (clientv3.WithPrefix): the empty prefix is every key,
// from "\x00" with range_end "\x00".
func prefixRange(prefix string) (key, end string) {
	if prefix == "" {
		return "\x00", "\x00"
	}
	return prefix, clientv3.GetPrefixRangeEnd(prefix)
}

// inRange says whether key k falls in etcd's range [key, end).
func inRange(k, key, end string) bool {
	switch end {
	case "":
		return k == key
	case "\x00":
		return k >= key
	}
	return k >= key && k < end
}

// reads gives a Source the reads built on its ranger: Children, List and Get
// are the same for a live etcd and a data file.
type reads struct{ r ranger }

func (t reads) Children(ctx context.Context, prefix string, rev int64) (Level, error) {
	return children(ctx, t.r, prefix, rev)
}

func (t reads) Count(ctx context.Context, prefix string, rev int64) (int64, error) {
	key, end := prefixRange(prefix)
	res, err := t.r.rangeKeys(ctx, rangeRequest{key: key, end: end, rev: rev, countOnly: true})
	return res.count, err
}

// List pages the keys below prefix, keys only unless page asks for values.
func (t reads) List(ctx context.Context, prefix string, rev int64, page PageToken) (Page, error) {
	limit := page.Limit
	if limit <= 0 {
		limit = DefaultPageSize
	}
	key, end := prefixRange(prefix)
	if page.After != "" {
		key = page.After + "\x00"
	}
	res, err := t.r.rangeKeys(ctx, rangeRequest{key: key, end: end, rev: rev, limit: int64(limit), keysOnly: !page.Values, uncounted: true})
	if err != nil {
		return Page{}, err
	}
	p := Page{Keys: res.kvs, Revision: res.rev}
	if res.more && len(res.kvs) > 0 {
		p.Next = &PageToken{After: res.kvs[len(res.kvs)-1].Key, Limit: limit, Values: page.Values}
	}
	return p, nil
}

// Get reads key as of rev.
func (t reads) Get(ctx context.Context, key string, rev int64) (*KV, error) {
	res, err := t.r.rangeKeys(ctx, rangeRequest{key: key, rev: rev})
	if err != nil {
		return nil, err
	}
	if len(res.kvs) == 0 {
		return nil, &notFoundError{key: key, rev: res.rev}
	}
	return &res.kvs[0], nil
}

type notFoundError struct {
	key string
	rev int64
}

func (e *notFoundError) Error() string {
	return fmt.Sprintf("%s not found at revision %d", e.key, e.rev)
}

func (e *notFoundError) Is(target error) bool { return target == ErrNotFound }
