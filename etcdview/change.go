package etcdview

import "github.com/etcdscope/etcdscope/decode"

// Type is what the entry did to its key, in kubectl's watch words: a
// deletion, the write that created the key (written at its create
// revision: kine sets no version 1), or a modification. The oldest write
// etcd still holds of a key whose earlier versions compaction removed is a
// modification too: it did not create it.
func (e Entry) Type() EventType {
	switch {
	case e.Deleted:
		return Deleted
	case e.KV.CreateRevision != 0 && e.KV.CreateRevision == e.KV.ModRevision:
		return Added
	}
	return Modified
}

// Object is the entry's value decoded by d, with metadata.resourceVersion
// set to the revision it was written at, as the API server shows it; the
// zero Object for a deletion. History holds values only, and a consumer
// decodes the few entries it shows: a key with 100k revisions is 100k
// values in memory, not 100k decoded objects.
func (e Entry) Object(d decode.Decoder) decode.Object {
	if e.Deleted {
		return decode.Object{}
	}
	return d.DecodeAt(e.KV.Key, e.KV.Value, e.KV.ModRevision)
}

// Summary says in one line what a change of type t did: "created",
// "deleted", or, for a modification, the field paths that differ from
// before to after (decode.DiffSummary). before is nil when the revision before is not known (it
// was compacted away, or the watch did not carry it).
func Summary(t EventType, before *decode.Object, after decode.Object) string {
	switch {
	case t == Added:
		return "created"
	case t == Deleted:
		return "deleted"
	case before == nil:
		return "(the revision before is gone)"
	}
	return decode.DiffSummary(*before, after)
}
