package etcdview

import (
	"errors"
	"fmt"

	"github.com/etcdscope/etcdscope/decode"
)

// EachRevision calls fn on each entry of h, newest first, with its object
// and the object of the revision before it (nil when there is none, or it
// is a deletion); after is the zero Object for a deletion. Each entry is
// decoded once, and two decoded objects are held at a time: the history
// itself holds values only, and a key with 100k revisions is never 100k
// decoded objects at once. fn's error stops the walk and is returned.
func (h History) EachRevision(d decode.Decoder, fn func(i int, e Entry, before *decode.Object, after decode.Object) error) error {
	var after decode.Object
	for i, e := range h.Entries {
		if i == 0 {
			after = e.Object(d)
		}
		var before *decode.Object
		if i+1 < len(h.Entries) {
			if older := h.Entries[i+1]; !older.Deleted {
				o := older.Object(d)
				before = &o
			}
		}
		if err := fn(i, e, before, after); err != nil {
			return err
		}
		if before != nil {
			after = *before
		} else {
			after = decode.Object{}
		}
	}
	return nil
}

// ErrNoRevision matches the error of NoRevision: a read that found no
// revision, not one that failed.
var ErrNoRevision = errors.New("no revision of the key")

// NoRevision is the error of a history with no entry: a key that does not
// exist now, whose earlier incarnations were not read, or one etcd holds
// no revision of (a key never written, or one whose every revision
// compaction removed: a Source returns that as an empty history, as etcd
// answers it). readEarlier ends the first: how the caller reads what was
// left unread, as "(read with --all-incarnations)".
func (h History) NoRevision(readEarlier string) error {
	key := decode.EscapeKey(h.Key)
	if note := h.EarlierNote(); note != "" {
		return noRevisionError(fmt.Sprintf("%s does not exist at revision %d; %s %s", key, h.Revision, note, readEarlier))
	}
	if t := h.Truncated(); t != "" {
		return noRevisionError(fmt.Sprintf("no revision of %s found (%s)", key, t))
	}
	return noRevisionError(fmt.Sprintf("no revision of %s found", key))
}

type noRevisionError string

func (e noRevisionError) Error() string { return string(e) }

func (e noRevisionError) Is(target error) bool { return target == ErrNoRevision }
