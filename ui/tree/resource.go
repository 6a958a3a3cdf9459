package tree

import (
	"context"

	"github.com/etcdscope/etcdscope/decode"
	"github.com/etcdscope/etcdscope/decode/table"
)

// Resolver is the table maker of the resource kubectl names name ("pods",
// "deployments.apps", "widgets.example.com"), as of revision rev: a
// custom resource's printer columns come from its CRD as etcd holds it
// then. It returns nil, nil for a name it does not know. The app passes
// one that reads CRDs (cli's); BuiltinResolver knows built-in kinds only.
type Resolver func(ctx context.Context, name string, rev int64) (*table.Resource, error)

// BuiltinResolver resolves the resources kube-apiserver builds in.
func BuiltinResolver(_ context.Context, name string, _ int64) (*table.Resource, error) {
	res, ok := decode.LookupResource(name)
	if !ok {
		return nil, nil
	}
	return table.Builtin(res)
}

// kubectlName is the name kubectl resolves to the resource of key k: the
// plural with its group ("widgets.example.com": decode reads a custom
// resource's from its "<group>/<plural>" storage prefix).
func kubectlName(k decode.Key) string {
	if k.Group == "" {
		return k.Resource
	}
	return k.Resource + "." + k.Group
}

// objectsOf is the key of the first object of a leaf level, a level whose
// entries are all keys of objects; ok is false for any other level.
func objectsOf(ld *loaded) (decode.Key, bool) {
	if len(ld.children) == 0 {
		return decode.Key{}, false
	}
	for _, ch := range ld.children {
		if ch.Dir {
			return decode.Key{}, false
		}
	}
	k := decode.ParseKey(ld.children[0].Prefix)
	return k, k.IsObject
}

// resolveLevel gives a leaf level of objects its resource, as of the
// level's revision; a level of a resource that is not known, or whose
// definition cannot be read, keeps its list of names, and says why.
func resolveLevel(ctx context.Context, resolve Resolver, ld *loaded) {
	k, ok := objectsOf(ld)
	if !ok {
		return
	}
	res, err := resolve(ctx, kubectlName(k), ld.rev)
	if err != nil {
		ld.resErr = err
		return
	}
	ld.res = res
}
