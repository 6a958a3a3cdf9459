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

// buffersPerStream is the chunks of one stream in memory at once: those
// ahead, the one being received and the one being compared.
const buffersPerStream = chunksAhead + 2

// stream is one store's keys in order, read from its first member by a
// goroutine of its own. Its other members are those whose HashKV at the
// revision was the first's: the same hash is the same revisions, so their
// keys are those the first member answers, and a store is read once
// however many members hold it.
type stream struct {
	members []*member
	ch      chan etcdview.RawChunk
	err     error // set before ch is closed
	chunk   etcdview.RawChunk
	next    int // chunk.KVs[next] is the head
	done    bool
}

// head is the stream's next key, nil at its end; it waits for the next
// chunk when the last one is used up, and gives that one's buffer back to
// bufs for the chunks to come.
func (s *stream) head(ctx context.Context, bufs *etcdview.RawBuffers) (*etcdview.RawKV, error) {
	for !s.done && s.next == len(s.chunk.KVs) {
		bufs.Put(s.chunk)
		s.chunk, s.next = etcdview.RawChunk{}, 0
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
	return &s.chunk.KVs[s.next], nil
}

// streams groups the members that can be compared into the stores to
// read: the members hashed alike share one, each member that was not
// hashed (a learner, a user etcd refused HashKV) is one of its own.
func streams(ms []*member) []*stream {
	var out []*stream
	byHash := map[uint32]*stream{}
	for _, m := range ms {
		if m.Problem {
			continue
		}
		m.Compared = true
		if s, ok := byHash[m.Hash]; ok && m.Hashed {
			s.members = append(s.members, m)
			continue
		}
		s := &stream{members: []*member{m}, ch: make(chan etcdview.RawChunk, chunksAhead)}
		if m.Hashed {
			byHash[m.Hash] = s
		}
		out = append(out, s)
	}
	return out
}

// compare reads the keys of r.Prefix at r.Rev from every store that can be
// compared, all at once, and merges them in key order: a key that every
// store holds byte for byte the same is counted and dropped without being
// decoded, one that differs is decoded, and becomes a Difference when its
// value, create or mod revision, version or lease differ.
func compare(ctx context.Context, live MemberDialer, ms []*member, r *Report, opts Options) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	key, end := prefixRange(r.Prefix)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	ss := streams(ms)
	r.Method = MethodRange
	if len(ss) < 2 {
		r.Consistent = true
		if len(ss) == 0 || len(ss[0].members) < 2 {
			r.Note = joinNote(r.Note, "only one member could be compared")
		}
		return nil
	}
	// Every chunk is received into a buffer of one given back, once the
	// first few are: a store of 1 GiB is read into a few MiB, and leaves
	// the collector nothing to sweep.
	bufs := etcdview.NewRawBuffers(len(ss) * buffersPerStream)
	for _, s := range ss {
		m := s.members[0]
		wg.Go(func() {
			defer close(s.ch)
			s.err = m.conn.RangeRaw(ctx, key, end, r.Rev, bufs, func(c etcdview.RawChunk) error {
				select {
				case s.ch <- c:
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
	var total atomic.Int64
	wg.Go(func() {
		// The estimate of Progress; a user who may not count the range
		// sees a progress without a total.
		if n, err := live.Count(ctx, r.Prefix, r.Rev); err == nil {
			total.Store(n)
		}
	})
	report(opts, Progress{Phase: PhaseCompare})
	heads := make([]*etcdview.RawKV, len(ss))
	for {
		var first *etcdview.RawKV
		for i, s := range ss {
			h, err := s.head(ctx, bufs)
			if err != nil {
				return err
			}
			heads[i] = h
			if h != nil && (first == nil || bytes.Compare(h.Key, first.Key) < 0) {
				first = h
			}
		}
		if first == nil {
			break
		}
		key := first.Key
		d, differ, err := differenceAt(key, ms, ss, heads)
		if err != nil {
			return err
		}
		if differ {
			r.DifferencesTotal++
			if len(r.Differences) < MaxDifferences {
				r.Differences = append(r.Differences, d)
			}
		}
		for i, s := range ss {
			if heads[i] != nil && bytes.Equal(heads[i].Key, key) {
				s.next++
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

// differenceAt compares each store's state of key (heads[i] when it is
// key, absent otherwise): the same bytes everywhere agree, and only then
// are the stores' KeyValues decoded. A Difference holds the state of
// each member compared, in the order of ms.
func differenceAt(key []byte, ms []*member, ss []*stream, heads []*etcdview.RawKV) (Difference, bool, error) {
	same := true
	for _, h := range heads {
		same = same && h != nil && bytes.Equal(h.Key, key) && bytes.Equal(h.Bytes, heads[0].Bytes)
	}
	if same {
		return Difference{}, false, nil
	}
	kvs := make([]*etcdview.KV, len(ss))
	var ref *etcdview.KV
	differ := false
	for i, h := range heads {
		if h == nil || !bytes.Equal(h.Key, key) {
			differ = true
			continue
		}
		kv, err := h.Decode()
		if err != nil {
			return Difference{}, false, fmt.Errorf("%s answered %w", ss[i].members[0].Name, err)
		}
		kvs[i] = &kv
		if ref == nil {
			ref = &kv
		} else {
			differ = differ || !sameKV(ref, &kv)
		}
	}
	if !differ {
		return Difference{}, false, nil
	}
	d := Difference{Key: string(key)}
	for _, m := range ms {
		i := slices.IndexFunc(ss, func(s *stream) bool { return slices.Contains(s.members, m) })
		if i < 0 {
			continue
		}
		ks := KeyState{Member: m.Name}
		if kv := kvs[i]; kv != nil {
			sum := sha256.Sum256(kv.Value)
			ks = KeyState{Member: m.Name, Present: true, CreateRevision: kv.CreateRevision, ModRevision: kv.ModRevision,
				Version: kv.Version, ValueHash: hex.EncodeToString(sum[:8]), Size: len(kv.Value)}
		}
		d.Members = append(d.Members, ks)
	}
	return d, true, nil
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
