// Package check holds the checks of `etcdscope check` that need more than
// one read: whether the members of a cluster hold the same data
// (Members), and each member's value of one key (MemberValues).
package check

import (
	"time"

	"github.com/etcdscope/etcdscope/etcdview"
)

// Options configure Members.
type Options struct {
	// Prefix limits the comparison of keys to those that start with it;
	// "" compares every key. The members' hashes are of their whole store
	// whatever the prefix.
	Prefix string
	// Rev is the revision compared; 0 pins the newest revision.
	Rev int64
	// Wait bounds how long Members waits for a member whose newest
	// revision is below Rev to catch up; 0 means DefaultWait.
	Wait time.Duration
	// Progress, when set, is called from Members' goroutine as it goes:
	// at each phase, and every few thousand keys compared.
	Progress func(Progress)
}

// DefaultWait is how long Members waits for a member behind the pinned
// revision: a follower of a busy cluster is a few milliseconds behind, one
// that is minutes behind will not catch up while a person waits.
const DefaultWait = 5 * time.Second

// Progress is how far Members is.
type Progress struct {
	Phase string // PhaseHash or PhaseCompare
	// Done is the keys compared so far, Total an estimate of how many
	// there are (the keys of the prefix at Rev on one member); both 0 in
	// PhaseHash.
	Done, Total int64
}

// The phases of Members.
const (
	PhaseHash    = "hashing"
	PhaseCompare = "comparing keys"
)

// Report is what Members found.
type Report struct {
	// Rev is the revision compared; CompactRevision the members'
	// compaction (the oldest revision that can be compared), 0 when not
	// known.
	Rev, CompactRevision int64
	Prefix               string
	// Single is set for a source that is one store (kine, a data file):
	// there is nothing to compare, which is no failure.
	Single string
	// Members is every member of the cluster, in name order.
	Members []Member
	// Consistent is true when every member compared holds the same data
	// at Rev (see Method).
	Consistent bool
	// Method says how the members were compared: MethodHash when their
	// HashKV answers agreed, MethodRange when keys were read.
	Method string
	// Note is one line on how the comparison went, "" when there is
	// nothing to add: HashKV refused to this user, hashes that differ in
	// an earlier revision only.
	Note string
	// Compared is how many keys the range reads compared.
	Compared int64
	// Differences are the keys that differ, in key order, at most
	// MaxDifferences of them; DifferencesTotal counts them all.
	Differences      []Difference
	DifferencesTotal int64
}

// Methods of Report.
const (
	MethodHash  = "hashkv"
	MethodRange = "range reads"
)

// MaxDifferences bounds Report.Differences: a member that lost its whole
// store differs in every key, and the report's memory must not grow with
// the store.
const MaxDifferences = 1000

// Failed says whether the members disagree.
func (r *Report) Failed() bool { return r.Single == "" && !r.Consistent }

// Member is one member of the cluster as Members found it.
type Member struct {
	Name     string
	Endpoint string
	ID       uint64
	Learner  bool
	// Hash is its HashKV at Rev, when Hashed.
	Hash   uint32
	Hashed bool
	// Revision is its newest revision when it was asked.
	Revision int64
	// Compared says whether its keys or hash took part in the comparison.
	Compared bool
	// State is one line: "hash 1a2b3c4d at revision 42", "down: connection
	// refused", "behind: at revision 40 after 5s, below 42; not compared".
	State string
	// Problem says the member could not be compared (down, behind,
	// refused): it is not counted either way.
	Problem bool
}

// Difference is one key on which the members disagree.
type Difference struct {
	Key string
	// Members holds one state per compared member, in Report.Members'
	// order.
	Members []KeyState
}

// KeyState is one member's version of one key at Rev.
type KeyState struct {
	Member         string
	Present        bool
	CreateRevision int64
	ModRevision    int64
	Version        int64
	// ValueHash is the SHA-256 of the value, in hex, its first 16 digits.
	ValueHash string
	Size      int
}

// MemberValue is one member's value of a key, for a view that shows them
// side by side.
type MemberValue struct {
	Member   string
	Endpoint string
	// KV is the key at the revision, nil when absent or when Err is set.
	KV  *etcdview.KV
	Err error
}
