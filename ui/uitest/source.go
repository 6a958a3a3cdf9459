// Package uitest is what the UI's model tests, golden screens and
// benchmarks run on: an in-memory etcdview.Source with every revision, whose
// contents and changes the test fixes; a Clock for the models' timers; and
// Drive, the bubbletea loop without a terminal.
package uitest

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/etcdscope/etcdscope/etcdview"
)

// write is one revision of the store.
type write struct {
	kv      etcdview.KV
	prev    *etcdview.KV // the key before the write; nil when it did not exist
	deleted bool
}

func (w write) event() etcdview.Event {
	typ := etcdview.Added
	switch {
	case w.deleted:
		typ = etcdview.Deleted
	case w.prev != nil:
		typ = etcdview.Modified
	}
	return etcdview.Event{Type: typ, KV: w.kv, Prev: w.prev}
}

// Source is an etcd in memory: every write is kept, so every revision can
// be read. Watchers receive each write as it happens.
type Source struct {
	// UncountedAbove, when above 0, makes Children leave a directory of
	// more keys than this CountUnknown for the caller to Count, as the live
	// skip-scan leaves one whose keys do not fit in its scan batch. Set it
	// before the first read.
	UncountedAbove int64

	mu        sync.Mutex
	rev       int64
	compacted int64
	writes    []write          // in revision order, one a revision
	latest    map[string][]int // key → indexes into writes
	watchers  []*watcher
	status    etcdview.Cluster
	keysAt    map[int64][]string // sorted live keys, cached per revision
}

// New is an empty store at revision 1, described as a 3-member cluster
// whose first member leads.
func New() *Source {
	s := &Source{rev: 1, latest: map[string][]int{}, keysAt: map[int64][]string{}}
	for i := range 3 {
		s.status.Members = append(s.status.Members, etcdview.Member{
			ID: uint64(i + 1), Name: fmt.Sprintf("etcd-%d", i), Endpoint: fmt.Sprintf("http://127.0.0.1:%d", 2379+10*i),
			Leader: i == 0, Version: "3.7.3", DBSize: 1 << 20, RaftTerm: 2, RaftIndex: 100, Applied: 100,
		})
	}
	s.status.Description = "fixture"
	return s
}

// Put writes value at key and returns the new revision.
func (s *Source) Put(key string, value []byte) int64 {
	return s.apply(key, value, false)
}

// Delete deletes key and returns the new revision.
func (s *Source) Delete(key string) int64 {
	return s.apply(key, nil, true)
}

// apply writes at the next revision and queues the change for the watchers
// it concerns; it never waits for one, so no reader can hold the store.
func (s *Source) apply(key string, value []byte, del bool) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rev++
	w := write{kv: etcdview.KV{Key: key, Value: value, ModRevision: s.rev, CreateRevision: s.rev, Version: 1}, deleted: del}
	if idx := s.latest[key]; len(idx) > 0 {
		if last := s.writes[idx[len(idx)-1]]; !last.deleted {
			p := last.kv
			w.prev = &p
			w.kv.CreateRevision, w.kv.Version = p.CreateRevision, p.Version+1
		}
	}
	if del {
		w.kv = etcdview.KV{Key: key, ModRevision: s.rev}
	}
	s.latest[key] = append(s.latest[key], len(s.writes))
	s.writes = append(s.writes, w)
	for _, wt := range s.watchers {
		wt.offer(w)
	}
	return s.rev
}

// Notify sends every watcher a batch with only a note, as a resume after a
// fault or a leader change arrives.
func (s *Source) Notify(note string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, w := range s.watchers {
		w.push(etcdview.Batch{Revision: s.rev, Note: note})
	}
}

// Compact drops revisions before rev from reads.
func (s *Source) Compact(rev int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.compacted = rev
	s.status.CompactRevision = rev
}

// SetStatus replaces the members Status reports.
func (s *Source) SetStatus(members []etcdview.Member) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.status.Members = members
}

// Revision is the store's newest revision.
func (s *Source) Revision() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rev
}

func (s *Source) check(rev int64) (int64, error) {
	if rev == 0 {
		return s.rev, nil
	}
	if rev < s.compacted {
		return 0, &etcdview.CompactedError{Rev: rev, Compacted: s.compacted}
	}
	if rev > s.rev {
		return 0, fmt.Errorf("revision %d is in the future: the store is at %d", rev, s.rev)
	}
	return rev, nil
}

// at is key as of rev, or nil.
func (s *Source) at(key string, rev int64) *write {
	idx := s.latest[key]
	for i := len(idx) - 1; i >= 0; i-- {
		if w := &s.writes[idx[i]]; w.kv.ModRevision <= rev {
			if w.deleted {
				return nil
			}
			return w
		}
	}
	return nil
}

// keys are the keys live at rev, sorted.
func (s *Source) keys(rev int64) []string {
	if k, ok := s.keysAt[rev]; ok {
		return k
	}
	var out []string
	for k := range s.latest {
		if s.at(k, rev) != nil {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	s.keysAt = map[int64][]string{rev: out}
	return out
}

func below(keys []string, prefix string) []string {
	from := sort.SearchStrings(keys, prefix)
	to := from
	for to < len(keys) && strings.HasPrefix(keys[to], prefix) {
		to++
	}
	return keys[from:to]
}

// Children groups the keys below prefix by their next segment, each with
// its count unless UncountedAbove leaves it to Count.
func (s *Source) Children(ctx context.Context, prefix string, rev int64) (etcdview.Level, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rev, err := s.check(rev)
	if err != nil {
		return etcdview.Level{}, err
	}
	l := etcdview.Level{Prefix: prefix, Revision: rev}
	for _, k := range below(s.keys(rev), prefix) {
		name := k[len(prefix):]
		dir := false
		if i := strings.Index(name, "/"); i >= 0 {
			name, dir = name[:i+1], true
		}
		if n := len(l.Children); n > 0 && l.Children[n-1].Name == name {
			l.Children[n-1].Count++
			continue
		}
		l.Children = append(l.Children, etcdview.Child{Name: name, Prefix: prefix + name, Dir: dir, Count: 1})
	}
	for i, c := range l.Children {
		if s.UncountedAbove > 0 && c.Dir && c.Count > s.UncountedAbove {
			l.Children[i].Count = etcdview.CountUnknown
		}
	}
	return l, nil
}

// Count is the number of keys below prefix.
func (s *Source) Count(ctx context.Context, prefix string, rev int64) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rev, err := s.check(rev)
	if err != nil {
		return 0, err
	}
	return int64(len(below(s.keys(rev), prefix))), nil
}

// List pages the keys below prefix.
func (s *Source) List(ctx context.Context, prefix string, rev int64, page etcdview.PageToken) (etcdview.Page, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rev, err := s.check(rev)
	if err != nil {
		return etcdview.Page{}, err
	}
	keys := below(s.keys(rev), prefix)
	if page.After != "" {
		keys = keys[sort.SearchStrings(keys, page.After+"\x00"):]
	}
	limit := page.Limit
	if limit == 0 {
		limit = etcdview.DefaultPageSize
	}
	p := etcdview.Page{Revision: rev}
	if len(keys) > limit {
		keys = keys[:limit]
		p.Next = &etcdview.PageToken{After: keys[limit-1], Limit: page.Limit, Values: page.Values}
	}
	for _, k := range keys {
		kv := s.at(k, rev).kv
		if !page.Values {
			kv.Value = nil
		}
		p.Keys = append(p.Keys, kv)
	}
	return p, nil
}

// Get reads key as of rev.
func (s *Source) Get(ctx context.Context, key string, rev int64) (*etcdview.KV, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rev, err := s.check(rev)
	if err != nil {
		return nil, err
	}
	w := s.at(key, rev)
	if w == nil {
		return nil, fmt.Errorf("get %s at revision %d: %w", key, rev, etcdview.ErrNotFound)
	}
	kv := w.kv
	return &kv, nil
}

// History is every revision of key the store retains, newest first: those
// after the compaction, and the one the compaction kept, the newest at or
// before it unless a deletion (as etcd's mvcc keyIndex.compact keeps it). A
// key never written, or written only before the compaction and deleted
// then, has an empty history, as Live and File give it. Every incarnation
// is read, as File reads them, whatever opts ask.
func (s *Source) History(ctx context.Context, key string, _ etcdview.HistoryOptions) (etcdview.History, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	h := etcdview.History{Key: key, Revision: s.rev, Earlier: etcdview.EarlierRead}
	idx := s.latest[key]
	for i := len(idx) - 1; i >= 0; i-- {
		w := s.writes[idx[i]]
		atOrBefore := w.kv.ModRevision <= s.compacted
		if atOrBefore && (w.deleted || i > 0) {
			h.CompactedAt = s.compacted
		}
		if !atOrBefore || !w.deleted {
			h.Entries = append(h.Entries, etcdview.Entry{KV: w.kv, Deleted: w.deleted})
		}
		if atOrBefore {
			break
		}
	}
	return h, nil
}

// Status reports the fixed members and the store's revision.
func (s *Source) Status(ctx context.Context) (etcdview.Cluster, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cl := s.status
	cl.Members = append([]etcdview.Member(nil), s.status.Members...)
	cl.Revision = s.rev
	for i := range cl.Members {
		if cl.Members[i].Err == nil {
			cl.Members[i].Revision = s.rev
		}
	}
	return cl, nil
}
