package tree

import (
	"context"

	"github.com/etcdscope/etcdscope/decode"
	"github.com/etcdscope/etcdscope/decode/table"
)

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
func resolveLevel(ctx context.Context, resolve table.Resolver, ld *loaded) {
	k, ok := objectsOf(ld)
	if !ok {
		return
	}
	res, err := resolve(ctx, table.KubectlName(k), ld.rev)
	if err != nil {
		ld.resErr = err
		return
	}
	ld.res = res
}
