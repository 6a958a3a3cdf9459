package check

import (
	"cmp"
	"context"
	"errors"
	"sync"

	"github.com/etcdscope/etcdscope/etcdview"
)

// MemberValues is each member's value of key at rev (0: the newest), read
// serializable from each member alone, for a view that shows them side by
// side; a member that cannot be read has its Err. A source of one store
// gives its one value.
func MemberValues(ctx context.Context, src etcdview.Source, key string, rev int64) ([]MemberValue, error) {
	cl, err := src.Status(ctx)
	if err != nil {
		return nil, err
	}
	rev = cmp.Or(rev, cl.Revision)
	live, ok := src.(MemberDialer)
	if !ok || cl.Kine {
		v := MemberValue{Member: cl.Description}
		v.KV, v.Err = get(ctx, src, key, rev)
		return []MemberValue{v}, nil
	}
	out := make([]MemberValue, len(cl.Members))
	var wg sync.WaitGroup
	for i, m := range cl.Members {
		out[i] = MemberValue{Member: m.Name, Endpoint: m.Endpoint, Err: m.Err}
		if m.Err != nil {
			continue
		}
		wg.Go(func() {
			conn, err := live.DialMember(ctx, m.Endpoint)
			if err != nil {
				out[i].Err = err
				return
			}
			defer conn.Close()
			out[i].KV, out[i].Err = get(ctx, conn, key, rev)
		})
	}
	wg.Wait()
	return out, nil
}

// get is src's key at rev, nil without error when it is absent.
func get(ctx context.Context, src etcdview.Source, key string, rev int64) (*etcdview.KV, error) {
	kv, err := src.Get(ctx, key, rev)
	if errors.Is(err, etcdview.ErrNotFound) {
		return nil, nil
	}
	return kv, err
}
