package etcdview

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Source is every read the TUI and the CLI make of etcd state. Live reads a
// running etcd, File an offline data file; neither ever writes.
//
// Every read takes a revision: 0 means the newest, R > 0 the store as it was
// at revision R (time travel). A revision older than the last compaction fails
// with a *CompactedError.
type Source interface {
	// Children is one level of the key tree below prefix, by skip-scan.
	// It costs round trips per child, not per key: a directory too large
	// to count from the keys read on the way has Count CountUnknown (ask
	// Count for it).
	Children(ctx context.Context, prefix string, rev int64) (Level, error)
	// Count is how many keys start with prefix. etcd walks its index over
	// the whole range to count it: on a large directory that is the
	// expensive call, so callers ask it apart, and only when they show it.
	Count(ctx context.Context, prefix string, rev int64) (int64, error)
	// List pages the keys below prefix, keys only unless the token asks
	// for values.
	List(ctx context.Context, prefix string, rev int64, page PageToken) (Page, error)
	// Get reads one key; a missing key is an error matching ErrNotFound.
	Get(ctx context.Context, key string, rev int64) (*KV, error)
	// History is the retained revisions of one key, newest first: those of
	// its current incarnation, and the earlier ones when opts ask (see
	// HistoryOptions).
	History(ctx context.Context, key string, opts HistoryOptions) (History, error)
	// Watch streams the changes below prefix until ctx ends; the channel is
	// closed after the last batch.
	Watch(ctx context.Context, prefix string, opts WatchOptions) <-chan Batch
	// Status describes the cluster (or the data file) and each member.
	Status(ctx context.Context) (Cluster, error)
}

// KV is one key at one revision, with etcd's metadata.
type KV struct {
	Key            string
	Value          []byte // nil when read keys only
	CreateRevision int64
	ModRevision    int64
	Version        int64 // number of writes since the key was (re)created
	Lease          int64
}

// Child is one entry of a tree level: a key, or a path segment that more keys
// share.
type Child struct {
	// Name is the part of the key after the level's prefix, up to and
	// including the next "/" for a directory: "pods/", "default/", "web-0".
	Name string
	// Prefix is the level's prefix + Name: the key itself, or the prefix to
	// open the directory with.
	Prefix string
	// Dir is true when Name ends in "/": keys below it, none exactly at it.
	Dir bool
	// Count is how many keys Prefix covers: 1 for a key, CountUnknown for
	// a directory Children did not count.
	Count int64
}

// CountUnknown is the Count of a directory that Children left to Count.
const CountUnknown = -1

// Level is one level of the key tree as of one revision.
type Level struct {
	Prefix   string
	Revision int64 // the revision it was read at
	Children []Child
}

// PageToken asks for one page of List. The zero value is the first page of
// DefaultPageSize keys.
type PageToken struct {
	After string // list keys after this one; "" from the start
	Limit int    // keys per page; 0 means DefaultPageSize
	// Values asks for the values too: one range per page instead of a Get
	// per key, for callers that decode every object of a list.
	Values bool
}

// DefaultPageSize is the page size of List when the token gives none.
const DefaultPageSize = 500

// Page is one page of keys. Pass Revision back as rev with Next to read the
// following page as of the same revision.
type Page struct {
	Keys     []KV // KV.Value is nil unless the token asked for values
	Revision int64
	Next     *PageToken // nil on the last page
}

// History is what etcd still holds of one key.
type History struct {
	Key      string
	Revision int64   // the store's revision when it was read
	Entries  []Entry // newest first
	// CompactedAt is the store's compaction revision when it cut earlier
	// revisions of this key away; 0 when nothing of the key was lost.
	CompactedAt int64
	// Earlier says whether Entries hold the key's incarnations before its
	// current one, and whether etcd holds any.
	Earlier Earlier
	// EarlierSeenAt is a revision at which an earlier incarnation existed,
	// when Earlier is EarlierUnread.
	EarlierSeenAt int64
}

// Truncated says where compaction cut the history off, or "" when it did not.
func (h History) Truncated() string {
	if h.CompactedAt == 0 {
		return ""
	}
	return fmt.Sprintf("history before revision %d was compacted", h.CompactedAt)
}

// Complete says whether Entries are every revision of the key etcd holds.
func (h History) Complete() bool { return h.Earlier == EarlierNone || h.Earlier == EarlierRead }

// EarlierNote says in one line what is known of the earlier incarnations
// that were not read, or "" when nothing was left unread.
func (h History) EarlierNote() string {
	switch {
	case h.Complete():
		return ""
	case h.Earlier == EarlierUnread:
		return fmt.Sprintf("an earlier incarnation existed at revision %d; the incarnations before this one were not read", h.EarlierSeenAt)
	}
	return "earlier incarnations, if etcd holds any, were not read"
}

// HistoryOptions say how much of a key's history History reads.
type HistoryOptions struct {
	// AllIncarnations reads the key's incarnations before its current one
	// too (what it held before each deletion and re-creation). A live etcd
	// has no read that finds them but a replay of its history through a
	// watch, for which etcd reads every revision it holds: seconds on a
	// store of millions. Without it, History reads the current
	// incarnation only, or that of a deleted key which ended last, about a
	// range per version.
	AllIncarnations bool
	// Progress, when set, is called from History's goroutine while a
	// replay goes on: when it starts, at each answer of etcd, and every
	// 200 ms while it waits for one.
	Progress func(ReplayProgress)
}

// ReplayProgress is how far a replay of etcd's history has come.
type ReplayProgress struct {
	From, Head int64 // the revisions replayed, both included
	// Reached is the revision up to which etcd has answered; From-1 before
	// its first answer. etcd reads the whole span up to its head before it
	// answers with the first (up to) 1000 revisions of the key
	// (mvcc.watchableStore.syncWatchers), so Reached moves in jumps.
	Reached int64
	Found   int // revisions of the key found so far
}

// String says where the replay is, for a progress line.
func (p ReplayProgress) String() string {
	done := 100 * float64(p.Reached-p.From+1) / float64(max(p.Head-p.From+1, 1))
	return fmt.Sprintf("replaying etcd's history, revisions %d to %d: %.0f%%, %d revisions of the key", p.From, p.Head, done, p.Found)
}

// Earlier is what a History knows of the key's incarnations before the
// one it read (the current one, or a deleted key's last): when the key was
// deleted and created again, what it held before.
type Earlier int

const (
	// EarlierUnknown is a history that did not read them; etcd may hold
	// some.
	EarlierUnknown Earlier = iota
	// EarlierUnread is a history that did not read them, of a key etcd
	// holds at least one of (History.EarlierSeenAt).
	EarlierUnread
	// EarlierNone is a history of a key etcd holds no earlier incarnation
	// of: Entries are all it holds.
	EarlierNone
	// EarlierRead is a history whose Entries hold every incarnation etcd
	// holds.
	EarlierRead
)

// String is how -o json and -o yaml name e.
func (e Earlier) String() string {
	switch e {
	case EarlierUnread:
		return "unread"
	case EarlierNone:
		return "none"
	case EarlierRead:
		return "read"
	}
	return "unknown"
}

// Entry is one revision of a key: a write or a deletion.
type Entry struct {
	// KV is the key as written at KV.ModRevision; for a deletion, the key
	// with the deletion's revision and no value.
	KV      KV
	Deleted bool
}

// EventType is what happened to a key, in kubectl's words.
type EventType string

const (
	Added    EventType = "ADDED"
	Modified EventType = "MODIFIED"
	Deleted  EventType = "DELETED"
)

// Event is one change of one key.
type Event struct {
	Type EventType
	// KV is the key after the change; for a deletion the key with the
	// deletion's revision and no value.
	KV KV
	// Prev is the key before the change, nil when it did not exist or etcd
	// no longer held it.
	Prev *KV
}

// Batch is one step of a watch: events of one or more revisions, a note that
// the head moved with nothing to report, or an error.
type Batch struct {
	Events []Event
	// Revision is the store's revision when the batch was sent, the head.
	// A live watch may still have changes before it on their way (etcd
	// stamps a catching-up watch's responses with its current revision),
	// so it is not a resume point: Delivered is.
	Revision int64
	// Delivered is the revision up to which the watch has delivered every
	// change below the prefix, in this batch or before it: a watch from
	// Delivered+1 misses nothing and repeats nothing. It moves on events
	// and on progress notifications that etcd sends only after every event
	// before their revision, never on a response whose events were all
	// delivered already. 0 in a gap's batches (Gap says what was lost) and
	// in an error batch.
	Delivered int64
	// Progress is true when the batch brings no event and no note: the
	// head moved, or a response brought only events delivered before;
	// Delivered says whether the watch got any further.
	Progress bool
	// Note says what happened to the stream in plain words: a resume after
	// a fault, a leader change, revisions lost to compaction. "" for an
	// ordinary batch.
	Note string
	// Gap is set when changes below the prefix were lost, or may have
	// been (deletions that could not be checked): etcd compacted
	// revisions the watch had still to deliver while its stream was cut.
	// The batches that follow bring each key written in the gap that
	// still exists, as of its last write.
	Gap *Gap
	// Err is a *CompactedError for a start revision etcd no longer holds
	// (the stream then goes on only when the caller asked for it), or the
	// error that ended the stream.
	Err error
}

// Gap is a span of revisions whose changes a watch could not replay.
type Gap struct {
	From, To int64 // the revisions, both included
	// Written is how many keys below the prefix were written in the span
	// and still exist; they follow as events, without Prev.
	Written int
	// Deleted is how many keys below the prefix before the span were gone
	// after it; -1 when the watch had not counted them before, and
	// deletions may have been lost unseen.
	Deleted int64
}

// WatchOptions configure Watch.
type WatchOptions struct {
	// Rev is the first revision to deliver; 0 means changes from now on.
	Rev int64
	// ContinueAfterCompaction makes a watch whose Rev was already
	// compacted when it starts go on from the oldest revision etcd still
	// holds, after the error batch; by default the stream ends with the
	// error. A compaction met later, on a resume, never ends a watch: see
	// Batch.Gap.
	ContinueAfterCompaction bool
	// ProgressInterval is how often an idle live watch asks etcd for its
	// revision, to keep the head and the resume point current, on an etcd
	// that orders the answers after pending events (3.4.31+, 3.5.13+,
	// 3.6+); 0 means 5s, as kube-apiserver asks for its watch cache.
	ProgressInterval time.Duration
	// WithoutPrevious asks a live etcd for no previous value with the
	// events (Event.Prev nil), for a watcher that holds them already, as
	// the recorder does: etcd reads each event's previous revision from
	// its backend for a watch that asks, about 40 of its 83 µs of CPU an
	// event. kine sends them all the same, and other sources may fill
	// Prev too.
	WithoutPrevious bool
	// CatchUp reads a backlog behind a live etcd's head through several
	// watches at once, each over a window of it, where one watch gets
	// 1000 revisions every 100 ms at most: for a watcher that must catch
	// up fast, as the recorder restarted after a while. Events arrive in
	// the same order, once each; a window's batch comes when the whole
	// window is read.
	CatchUp bool
}

// Cluster is the state of the etcd behind a Source.
type Cluster struct {
	// Description names the source: endpoints, or the data file.
	Description string
	Revision    int64 // the newest revision any member reported
	// CompactRevision is the last compaction: read from the data file, or
	// from kube-apiserver's compact_rev_key on a live etcd (0 when absent).
	CompactRevision int64
	Members         []Member
	// Kine says the etcd API is kine's (k3s' datastore over SQL), whose
	// one member has no ID, Raft or leader of its own: Members holds it
	// with the store's revision.
	Kine bool
	// Recording says the source is a recording `etcdscope record` wrote
	// (with Kine: it is in kine's schema), read from its file or from
	// PostgreSQL: what was recorded, not a running store.
	Recording bool
	// EmulatedVersion is the etcd version kine claims in Status (its
	// --emulated-etcd-version), for kine only.
	EmulatedVersion string
}

// Server names what serves the etcd API: "etcd", or "kine (emulating etcd
// 3.6.11)"; "recording" for a recording, which nothing serves.
func (c Cluster) Server() string {
	if c.Recording {
		return "recording"
	}
	if !c.Kine {
		return "etcd"
	}
	if c.EmulatedVersion == "" {
		return "kine"
	}
	return "kine (emulating etcd " + c.EmulatedVersion + ")"
}

// Member is one etcd member as its Status RPC reports it.
type Member struct {
	ID        uint64
	Name      string
	Endpoint  string // the client URL asked, or the data file
	Leader    bool
	Learner   bool
	Version   string
	DBSize    int64
	DBInUse   int64
	RaftTerm  uint64
	RaftIndex uint64 // committed index
	Applied   uint64
	Revision  int64
	Alarms    []string // errors the member reports about itself (NOSPACE, CORRUPT)
	// Err says why the member could not be asked; the other fields are then
	// those MemberList gave.
	Err error
}

// ErrNotFound is the error of Get for a key absent at that revision.
var ErrNotFound = errors.New("not found")

// ErrCompacted matches every *CompactedError.
var ErrCompacted = errors.New("required revision has been compacted")

// CompactedError is a read or watch at a revision compaction removed.
type CompactedError struct {
	Rev       int64 // the revision asked for
	Compacted int64 // the compaction revision: the oldest still readable
	Kine      bool  // kine holds the revisions, not etcd
	// Recording says a recording (etcdscope record) holds them: it starts
	// at Compacted, or its retention dropped what came before.
	Recording bool
}

func (e *CompactedError) Error() string {
	if e.Recording {
		return fmt.Sprintf("revision %d is not in the recording: the oldest revision it holds is %d", e.Rev, e.Compacted)
	}
	holder := "etcd"
	if e.Kine {
		holder = "kine"
	}
	return fmt.Sprintf("revision %d has been compacted: the oldest revision %s still holds is %d", e.Rev, holder, e.Compacted)
}

// Is makes errors.Is(err, ErrCompacted) true.
func (e *CompactedError) Is(target error) bool { return target == ErrCompacted }

var (
	_ Source = (*Live)(nil)
	_ Source = (*File)(nil)
)
