package uitest

import (
	"context"
	"strings"

	"github.com/etcdscope/etcdscope/etcdview"
)

// Scan hands fn every key below prefix as of opts.Rev, one record a key in
// one batch, sized as key plus value (etcd's KeyValue adds its revisions;
// the fixture's figures need only be consistent), and with opts.History
// every write after the compaction as a Retained record. It tells
// opts.Progress once, before the batch.
func (s *Source) Scan(ctx context.Context, prefix string, opts etcdview.ScanOptions, fn func([]etcdview.ScanRecord) error) (etcdview.ScanResult, error) {
	s.mu.Lock()
	rev, err := s.check(opts.Rev)
	if err != nil {
		s.mu.Unlock()
		return etcdview.ScanResult{}, err
	}
	var recs []etcdview.ScanRecord
	for _, k := range below(s.keys(rev), prefix) {
		kv := s.at(k, rev).kv
		recs = append(recs, etcdview.ScanRecord{Key: k, Size: int64(len(k) + len(kv.Value)), CreateRevision: kv.CreateRevision,
			ModRevision: kv.ModRevision, Version: kv.Version, Current: true})
	}
	if opts.History {
		for _, w := range s.writes {
			if w.kv.ModRevision > s.compacted && w.kv.ModRevision <= rev && strings.HasPrefix(w.kv.Key, prefix) {
				recs = append(recs, etcdview.ScanRecord{Key: w.kv.Key, Size: int64(len(w.kv.Key) + len(w.kv.Value)), CreateRevision: w.kv.CreateRevision,
					ModRevision: w.kv.ModRevision, Version: w.kv.Version, Tombstone: w.deleted, Retained: true})
			}
		}
	}
	res := etcdview.ScanResult{Revision: rev, CompactRevision: s.compacted, History: opts.History}
	s.mu.Unlock()
	if opts.Progress != nil {
		opts.Progress(etcdview.ScanProgress{Phase: etcdview.ScanValues, Total: int64(len(recs))})
	}
	if err := ctx.Err(); err != nil {
		return etcdview.ScanResult{}, err
	}
	return res, fn(recs)
}
