package check

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/etcdscope/etcdscope/etcdview"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
)

// member is one member while Members runs.
type member struct {
	Member
	conn    *etcdview.Live // nil when it could not be reached
	compact int64          // its compaction, as HashKV said it
}

// Members says whether the members of src hold the same data at one
// revision, and if not, which keys differ. It pins the revision, asks every
// member for its HashKV at it in parallel, and only when the hashes differ
// (or etcd refuses HashKV to this user) reads the keys of opts.Prefix,
// serializable and at the same revision, from one member of each hash
// (members hashed alike hold the same revisions) and from each member not
// hashed, and compares them a chunk at a time: memory holds a few chunks
// per member, never a store.
//
// A member that is down, behind the revision after opts.Wait, or a learner
// (which etcd serves no HashKV) gets a line of its own and is no failure. A
// source that is one store (kine, a data file) has nothing to compare, nor
// has one that cannot reach its members one by one (see MemberDialer).
func Members(ctx context.Context, src etcdview.Source, opts Options) (*Report, error) {
	r := &Report{Prefix: opts.Prefix}
	cl, err := src.Status(ctx)
	if err != nil {
		return nil, err
	}
	r.Rev, r.CompactRevision = cmp.Or(opts.Rev, cl.Revision), cl.CompactRevision
	live, ok := src.(MemberDialer)
	switch {
	case !ok:
		r.Single = cl.Description + " is one store: there are no members to compare"
		return r, nil
	case cl.Kine:
		r.Single = cl.Server() + " serves one store from its database: there are no members to compare"
		return r, nil
	case opts.Rev > cl.Revision:
		return nil, fmt.Errorf("revision %d is newer than the cluster's newest, %d", opts.Rev, cl.Revision)
	}
	report(opts, Progress{Phase: PhaseHash})
	ms := connect(ctx, live, cl.Members, r.Rev, cmp.Or(opts.Wait, DefaultWait))
	defer func() {
		for _, m := range ms {
			if m.conn != nil {
				m.conn.Close()
			}
		}
	}()
	denied, err := hashAll(ctx, ms, r.Rev)
	if err != nil {
		return nil, err
	}
	for _, m := range ms {
		if m.Hashed {
			r.CompactRevision = max(r.CompactRevision, m.compact)
		}
	}
	if agree, n := hashesAgree(ms); agree && !denied {
		r.Method, r.Consistent = MethodHash, true
		if n < 2 {
			r.Note = "only one member could be compared"
		}
		r.Members = publicMembers(ms)
		return r, nil
	}
	if denied {
		r.Note = "etcd allows HashKV to the root role only: the members were compared by range reads"
	}
	if err := compare(ctx, live, ms, r, opts); err != nil {
		return nil, err
	}
	r.Members = publicMembers(ms)
	return r, nil
}

// MemberDialer is a Source that reaches its members one by one: a live
// etcd (*etcdview.Live), or a Source that wraps one and passes the call on.
type MemberDialer interface {
	etcdview.Source
	DialMember(ctx context.Context, endpoint string) (*etcdview.Live, error)
}

func report(opts Options, p Progress) {
	if opts.Progress != nil {
		opts.Progress(p)
	}
}

// connect dials every member in parallel and waits, up to wait, for those
// whose newest revision is below rev.
func connect(ctx context.Context, live MemberDialer, members []etcdview.Member, rev int64, wait time.Duration) []*member {
	ms := make([]*member, len(members))
	var wg sync.WaitGroup
	for i, em := range members {
		m := &member{Member: Member{Name: em.Name, Endpoint: em.Endpoint, ID: em.ID, Learner: em.Learner, Revision: em.Revision}}
		ms[i] = m
		if em.Err != nil {
			m.down(em.Err)
			continue
		}
		wg.Go(func() {
			conn, err := live.DialMember(ctx, em.Endpoint)
			if err != nil {
				m.down(err)
				return
			}
			m.conn = conn
			m.catchUp(ctx, rev, wait)
		})
	}
	wg.Wait()
	return ms
}

func (m *member) down(err error) {
	m.Problem, m.State = true, "down: "+err.Error()
}

// catchUp waits until the member's newest revision is rev or more, and
// marks it behind when wait ends first.
func (m *member) catchUp(ctx context.Context, rev int64, wait time.Duration) {
	deadline := time.Now().Add(wait)
	for m.Revision < rev {
		if time.Now().After(deadline) {
			m.Problem = true
			m.State = fmt.Sprintf("behind: at revision %d after %v, below %d; not compared", m.Revision, wait, rev)
			return
		}
		select {
		case <-ctx.Done():
			m.down(ctx.Err())
			return
		case <-time.After(50 * time.Millisecond):
		}
		st := m.conn.EndpointStatus(ctx)
		if st.Err != nil {
			m.down(st.Err)
			return
		}
		m.Revision = st.Revision
	}
}

// hashAll asks every voter that answers for its HashKV at rev, in
// parallel. denied says etcd refused HashKV to the user; a compacted rev
// is the error.
func hashAll(ctx context.Context, ms []*member, rev int64) (denied bool, err error) {
	var wg sync.WaitGroup
	errs := make([]error, len(ms))
	for i, m := range ms {
		if m.Problem {
			continue
		}
		if m.Learner {
			m.State = "learner: etcd serves a learner no HashKV; compared by range reads when the voters' hashes differ"
			continue
		}
		wg.Go(func() {
			h, err := m.conn.HashKV(ctx, rev)
			switch {
			case err == nil:
				m.Hash, m.Hashed, m.Compared, m.compact = h.Hash, true, true, h.CompactRevision
				m.State = fmt.Sprintf("hash %08x at revision %d", h.Hash, rev)
			case errors.Is(err, rpctypes.ErrFutureRev):
				m.Problem = true
				m.State = fmt.Sprintf("behind: revision %d is ahead of it; not compared", rev)
			case errors.Is(err, rpctypes.ErrPermissionDenied) || errors.Is(err, rpctypes.ErrUserEmpty):
				m.State = "not hashed: etcd refused HashKV (" + err.Error() + ")"
				errs[i] = errHashDenied
			default:
				errs[i] = err
			}
		})
	}
	wg.Wait()
	for i, err := range errs {
		switch {
		case errors.Is(err, errHashDenied):
			denied = true
		case errors.Is(err, etcdview.ErrCompacted):
			return false, err
		case err != nil:
			ms[i].down(err)
		}
	}
	return denied, nil
}

var errHashDenied = errors.New("hashkv denied")

// hashesAgree says whether every member hashed has the same hash, and how
// many were hashed.
func hashesAgree(ms []*member) (bool, int) {
	n := 0
	for _, m := range ms {
		if !m.Hashed {
			continue
		}
		if n > 0 && m.Hash != ms[firstHashed(ms)].Hash {
			return false, n + 1
		}
		n++
	}
	return true, n
}

func firstHashed(ms []*member) int {
	return slices.IndexFunc(ms, func(m *member) bool { return m.Hashed })
}

func publicMembers(ms []*member) []Member {
	out := make([]Member, len(ms))
	for i, m := range ms {
		out[i] = m.Member
	}
	return out
}
