package etcdview

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// compactRevKey is where kube-apiserver's compactor records the revision it
// last compacted to (k8s.io/apiserver/pkg/storage/etcd3/compact.go), as a
// decimal string.
const compactRevKey = "compact_rev_key"

// Status asks every member for its status, in parallel: the endpoints the
// client was given first, then, at their advertised client URL, members
// MemberList names that none of those endpoints turned out to be. A member
// that does not answer is reported with its error; Status fails only when no
// member answers.
func (l *Live) Status(ctx context.Context) (Cluster, error) {
	ctx, cancel := l.commandTimeout().bound(ctx)
	defer cancel()
	endpoints := l.c.Endpoints()
	cl := Cluster{Description: "etcd at " + strings.Join(endpoints, ",")}

	answered := map[uint64]Member{}
	failed := map[string]Member{} // by endpoint
	collect := func(ms []Member) {
		for _, m := range ms {
			if m.Err != nil {
				failed[m.Endpoint] = m
			} else if _, seen := answered[m.ID]; !seen {
				answered[m.ID] = m
			}
		}
	}
	collect(l.statuses(ctx, endpoints))
	list, err := l.c.MemberList(ctx)
	if err == nil {
		l.kine.Store(isKine(list))
		l.kineKnown.Store(true)
		var more []string
		for _, pm := range list.Members {
			if _, ok := answered[pm.ID]; ok || len(pm.ClientURLs) == 0 {
				continue
			}
			if _, asked := failed[pm.ClientURLs[0]]; !asked {
				more = append(more, pm.ClientURLs[0])
			}
		}
		collect(l.statuses(ctx, more))
		for _, pm := range list.Members {
			m, ok := answered[pm.ID]
			switch {
			case ok:
			case len(pm.ClientURLs) == 0:
				// A member added but never started has no client URL.
				m = Member{ID: pm.ID, Err: errors.New("not started")}
			default:
				m = failed[pm.ClientURLs[0]]
				delete(failed, pm.ClientURLs[0])
				m.ID = pm.ID
			}
			m.Name, m.Learner = pm.Name, pm.IsLearner
			answered[pm.ID] = m
		}
	}
	for _, m := range answered {
		cl.Members = append(cl.Members, m)
		if m.Err == nil {
			cl.Revision = max(cl.Revision, m.Revision)
		}
	}
	for _, m := range failed {
		cl.Members = append(cl.Members, m)
	}
	slices.SortFunc(cl.Members, func(a, b Member) int {
		return cmp.Or(strings.Compare(a.Name, b.Name), strings.Compare(a.Endpoint, b.Endpoint))
	})
	if isKine(list) && len(answered) == 1 && answered[0].Err == nil {
		return l.kineStatus(ctx, cl)
	}
	if cl.Revision == 0 {
		return cl, noRevision(cl.Members)
	}
	cl.CompactRevision = l.apiserverCompaction(ctx)
	return cl, nil
}

// noRevision is Status's error when no member said a revision: what the
// first that answered without one said (a store's revision is 1 or more
// in etcd; an etcd API of another kind, as kine, may answer with an empty
// header), else the first member's error.
func noRevision(members []Member) error {
	for _, m := range members {
		if m.Err == nil {
			return fmt.Errorf("no etcd member answered with a revision: %s answered its status with revision 0 (an etcd API that is not etcd, such as kine?)", m.Endpoint)
		}
	}
	if len(members) == 0 {
		return errors.New("no etcd member answered: the client has no endpoint")
	}
	return fmt.Errorf("no etcd member answered: %w", members[0].Err)
}

// statuses calls Status on every endpoint at once.
func (l *Live) statuses(ctx context.Context, endpoints []string) []Member {
	return askEach(endpoints, func(ep string) Member { return l.status(ctx, ep) })
}

func (l *Live) status(ctx context.Context, ep string) Member {
	m := Member{Endpoint: ep}
	// The client waits for a connection until ctx ends; a stopped member
	// refuses TCP at once, so a plain connect tells it in no time.
	addr, err := dialAddress(ep)
	if err == nil {
		err = probe(ctx, addr, l.commandTimeout(), nil)
	}
	if err != nil {
		m.Err = err
		return m
	}
	st, err := l.c.Status(ctx, ep)
	switch {
	case err != nil:
		m.Err = requestError(ctx, err)
		return m
	case st == nil || st.Header == nil:
		m.Err = fmt.Errorf("%s answered its status without a header", ep)
		return m
	}
	m.ID = st.Header.MemberId
	m.Leader = st.Leader == st.Header.MemberId
	m.Learner = st.IsLearner
	m.Version = st.Version
	m.DBSize, m.DBInUse = st.DbSize, st.DbSizeInUse
	m.RaftTerm, m.RaftIndex, m.Applied = st.RaftTerm, st.RaftIndex, st.RaftAppliedIndex
	m.Revision = st.Header.Revision
	m.Alarms = st.Errors
	return m
}

// apiserverCompaction reads compact_rev_key; 0 when it is absent or the user
// may not read it.
func (l *Live) apiserverCompaction(ctx context.Context) int64 {
	resp, err := l.c.Get(ctx, compactRevKey)
	if err != nil || len(resp.Kvs) == 0 {
		return 0
	}
	rev, _ := strconv.ParseInt(string(resp.Kvs[0].Value), 10, 64)
	return rev
}
