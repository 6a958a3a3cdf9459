package check

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/etcdscope/etcdscope/etcdview"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// progressEvery is how many keys compared between two Progress calls.
const progressEvery = 4096

// chunksAhead is how many chunks each member's reader may hold before the
// comparison takes them: enough that every member streams while the
// comparison works, few enough that memory stays a few MiB per member.
const chunksAhead = 2

// stream is one member's keys in order, read by a goroutine of its own.
type stream struct {
	m     *member
	ch    chan []etcdview.KV
	err   error // set before ch is closed
	chunk []etcdview.KV
	done  bool
}

// head is the stream's next key, nil at its end; it waits for the next
// chunk when the last one is used up.
func (s *stream) head(ctx context.Context) (*etcdview.KV, error) {
	for !s.done && len(s.chunk) == 0 {
		select {
		case c, ok := <-s.ch:
			if !ok {
				s.done = true
				return nil, s.err
			}
			s.chunk = c
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if s.done {
		return nil, nil
	}
	return &s.chunk[0], nil
}

// compare reads the keys of r.Prefix at r.Rev from every member that can
// be compared, all at once, and merges them in key order: a key that every
// member holds the same (value, create and mod revision, version) is
// counted and dropped, one that differs becomes a Difference.
func compare(ctx context.Context, live *etcdview.Live, ms []*member, r *Report, opts Options) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	key, end := prefixRange(r.Prefix)
	var streams []*stream
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	for _, m := range ms {
		if m.Problem {
			continue
		}
		m.Compared = true
		s := &stream{m: m, ch: make(chan []etcdview.KV, chunksAhead)}
		streams = append(streams, s)
		wg.Go(func() {
			defer close(s.ch)
			s.err = m.conn.Range(ctx, key, end, r.Rev, func(kvs []etcdview.KV) error {
				select {
				case s.ch <- slices.Clone(kvs):
					return nil
				case <-ctx.Done():
					return ctx.Err()
				}
			})
			if s.err != nil {
				s.err = fmt.Errorf("read %s from %s: %w", describe(r.Prefix), m.Name, s.err)
			}
		})
	}
	r.Method = MethodRange
	if len(streams) < 2 {
		r.Consistent = true
		r.Note = joinNote(r.Note, "only one member could be compared")
		return nil
	}
	var total atomic.Int64
	wg.Go(func() {
		// The estimate of Progress; a user who may not count the range
		// sees a progress without a total.
		if n, err := live.Count(ctx, r.Prefix, r.Rev); err == nil {
			total.Store(n)
		}
	})
	report(opts, Progress{Phase: PhaseCompare})
	heads := make([]*etcdview.KV, len(streams))
	for {
		var first *etcdview.KV
		for i, s := range streams {
			h, err := s.head(ctx)
			if err != nil {
				return err
			}
			heads[i] = h
			if h != nil && (first == nil || h.Key < first.Key) {
				first = h
			}
		}
		if first == nil {
			break
		}
		if d, differ := differenceAt(first.Key, streams, heads); differ {
			r.DifferencesTotal++
			if len(r.Differences) < MaxDifferences {
				r.Differences = append(r.Differences, d)
			}
		}
		for i, s := range streams {
			if heads[i] != nil && heads[i].Key == first.Key {
				s.chunk = s.chunk[1:]
			}
		}
		r.Compared++
		if r.Compared%progressEvery == 0 {
			report(opts, Progress{Phase: PhaseCompare, Done: r.Compared, Total: total.Load()})
		}
	}
	report(opts, Progress{Phase: PhaseCompare, Done: r.Compared, Total: r.Compared})
	r.Consistent = r.DifferencesTotal == 0
	if r.Consistent && hashesDiffer(ms) {
		r.Consistent = false
		r.Note = joinNote(r.Note, fmt.Sprintf("the hashes differ but every key agrees at revision %d: an earlier revision, since the compaction at %d, differs (HashKV hashes every revision it holds)", r.Rev, r.CompactRevision))
	}
	return nil
}

// differenceAt compares each stream's state of key (heads[i] when it is
// key, absent otherwise).
func differenceAt(key string, streams []*stream, heads []*etcdview.KV) (Difference, bool) {
	var ref *etcdview.KV
	differ := false
	for i, h := range heads {
		if h == nil || h.Key != key {
			differ = true
			continue
		}
		if ref == nil {
			ref = heads[i]
			continue
		}
		differ = differ || !sameKV(ref, h)
	}
	if !differ {
		return Difference{}, false
	}
	d := Difference{Key: key, Members: make([]KeyState, len(streams))}
	for i, s := range streams {
		ks := KeyState{Member: s.m.Name}
		if h := heads[i]; h != nil && h.Key == key {
			sum := sha256.Sum256(h.Value)
			ks = KeyState{Member: s.m.Name, Present: true, CreateRevision: h.CreateRevision, ModRevision: h.ModRevision,
				Version: h.Version, ValueHash: hex.EncodeToString(sum[:8]), Size: len(h.Value)}
		}
		d.Members[i] = ks
	}
	return d, true
}

func sameKV(a, b *etcdview.KV) bool {
	return a.ModRevision == b.ModRevision && a.CreateRevision == b.CreateRevision && a.Version == b.Version &&
		a.Lease == b.Lease && bytes.Equal(a.Value, b.Value)
}

// hashesDiffer says whether two members hashed differently.
func hashesDiffer(ms []*member) bool {
	agree, _ := hashesAgree(ms)
	return !agree
}

// prefixRange is the etcd range of the keys that start with prefix: every
// key for "".
func prefixRange(prefix string) (key, end string) {
	if prefix == "" {
		return "\x00", "\x00"
	}
	return prefix, clientv3.GetPrefixRangeEnd(prefix)
}

func describe(prefix string) string {
	if prefix == "" {
		return "every key"
	}
	return "the keys of " + prefix
}

func joinNote(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}
