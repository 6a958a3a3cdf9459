package etcdview

import (
	"context"

	bolt "go.etcd.io/bbolt"
)

// History reads every revision of key the file holds, straight from the
// bucket. The file's index holds every incarnation of the key already, so
// the history is always complete, whatever opts ask, and there is no
// replay to report the progress of.
func (f *File) History(ctx context.Context, key string, _ HistoryOptions) (History, error) {
	h := History{Key: key, Revision: f.rev, CompactedAt: f.compacted, Earlier: EarlierRead}
	kr, ok := f.find(key)
	if !ok {
		return h, nil
	}
	err := f.view(func(tx *bolt.Tx) error {
		for i := len(kr.revs) - 1; i >= 0; i-- {
			kv, err := f.kv(tx, key, kr.revs[i], true)
			if err != nil {
				return err
			}
			h.Entries = append(h.Entries, Entry{KV: kv, Deleted: kr.revs[i].tombstone})
		}
		return nil
	})
	return h, err
}
