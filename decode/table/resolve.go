package table

import (
	"context"

	"github.com/etcdscope/etcdscope/decode"
)

// Resolver is the table maker of the resource kubectl names name ("pods",
// "deployments.apps", "widgets.example.com"), as of revision rev: a
// custom resource's comes from its CRD as etcd holds it then. It returns
// nil, nil for a name it does not know. Reading a CRD is I/O, which this
// package does not do: the CLI makes the resolver that reads them, and
// BuiltinResolver knows the built-in kinds only.
type Resolver func(ctx context.Context, name string, rev int64) (*Resource, error)

// BuiltinResolver resolves the resources kube-apiserver builds in.
func BuiltinResolver(_ context.Context, name string, _ int64) (*Resource, error) {
	res, ok := decode.LookupResource(name)
	if !ok {
		return nil, nil
	}
	return Builtin(res)
}

// KubectlName is the name kubectl resolves to the resource of key k: the
// plural with its group ("widgets.example.com": decode reads a custom
// resource's from its "<group>/<plural>" storage prefix).
func KubectlName(k decode.Key) string {
	if k.Group == "" {
		return k.Resource
	}
	return k.Resource + "." + k.Group
}

// ServedContentOf is o, decoded from the value at modRevision, as kubectl
// is served it (Object, then ServedContent): what a --where expression
// sees. o's object is consumed.
func (r *Resource) ServedContentOf(dec decode.Decoder, o decode.Object, modRevision int64) (map[string]any, error) {
	obj, err := r.Object(o.Object, modRevision)
	if err != nil {
		return nil, err
	}
	return obj.ServedContent(dec)
}
