// Package resource resolves the resource names kubectl takes (pods, deploy,
// a custom resource's plural, short name or kind) to where etcd keeps their
// objects: a built-in resource from decode/table, a custom one from the
// CustomResourceDefinitions the store holds. get, owners, history and the
// explorer's -r all resolve through it.
package resource

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/etcdscope/etcdscope/decode"
	"github.com/etcdscope/etcdscope/decode/table"
	"github.com/etcdscope/etcdscope/etcdview"
)

// Resolve is the resource name names as kubectl resolves it: a built-in
// one, or else a custom resource whose CustomResourceDefinition etcd holds
// at rev; nil when neither. For a custom resource rev comes back pinned to
// the revision the definitions were read at, so that its objects are read
// as of the same one as the printer columns.
func Resolve(ctx context.Context, src etcdview.Source, dec decode.Decoder, name string, rev int64) (*table.Resource, int64, error) {
	if r, err := table.BuiltinResolver(ctx, name, rev); r != nil || err != nil {
		return r, rev, err
	}
	crds, rev, err := CRDs(ctx, src, dec, rev)
	if err != nil {
		return nil, rev, fmt.Errorf("looking for the custom resource %q: %w", name, err)
	}
	name = strings.ToLower(name)
	for _, r := range crds {
		if slices.Contains(r.Names(), name) {
			return r, rev, nil
		}
	}
	return nil, rev, nil
}

// CRDs reads every CustomResourceDefinition at rev, and says which
// revision that was. A definition that does not decode defines nothing
// etcdscope can list, and is passed over.
func CRDs(ctx context.Context, src etcdview.Source, dec decode.Decoder, rev int64) ([]*table.Resource, int64, error) {
	crd, ok := decode.LookupResource("customresourcedefinitions.apiextensions.k8s.io")
	if !ok {
		return nil, rev, fmt.Errorf("this build knows no CustomResourceDefinitions")
	}
	dec.JSONOnly = true
	var out []*table.Resource
	err := etcdview.Pages(src, crd.KeyPrefix("", ""), rev, etcdview.Paging{Values: true})(ctx, func(p etcdview.Page) error {
		rev = p.Revision
		for _, kv := range p.Keys {
			if o := dec.DecodeAt(kv.Key, kv.Value, kv.ModRevision); o.Object != nil {
				if r, err := table.Custom(o.Object); err == nil {
					out = append(out, r)
				}
			}
		}
		return nil
	})
	return out, rev, err
}

// NoType is kubectl's error for a resource name the server serves no
// resource by (kubectl get's message for a NoResourceMatchError).
func NoType(name string) error {
	return fmt.Errorf("the server doesn't have a resource type %q", name)
}
