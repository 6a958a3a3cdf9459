package cli

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/etcdscope/etcdscope/decode"
	"github.com/etcdscope/etcdscope/decode/table"
	"github.com/etcdscope/etcdscope/etcdview"
)

// resolveResource is the resource name names as kubectl resolves it: a
// built-in one, or else a custom resource whose CustomResourceDefinition
// etcd holds at rev; nil when neither. For a custom resource rev comes
// back pinned to the revision the definitions were read at, so that its
// objects are read as of the same one as the printer columns.
func resolveResource(ctx context.Context, src etcdview.Source, dec decode.Decoder, name string, rev int64) (*table.Resource, int64, error) {
	if r, err := table.BuiltinResolver(ctx, name, rev); r != nil || err != nil {
		return r, rev, err
	}
	crds, rev, err := readCRDs(ctx, src, dec, rev)
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

// readCRDs reads every CustomResourceDefinition at rev, and says which
// revision that was. A definition that does not decode defines nothing
// etcdscope can list, and is passed over.
func readCRDs(ctx context.Context, src etcdview.Source, dec decode.Decoder, rev int64) ([]*table.Resource, int64, error) {
	crd, ok := decode.LookupResource("customresourcedefinitions.apiextensions.k8s.io")
	if !ok {
		return nil, rev, fmt.Errorf("this build knows no CustomResourceDefinitions")
	}
	dec.JSONOnly = true
	var out []*table.Resource
	for page := (etcdview.PageToken{Values: true}); ; {
		p, err := src.List(ctx, crd.KeyPrefix("", ""), rev, page)
		if err != nil {
			return nil, rev, err
		}
		rev = p.Revision
		for _, kv := range p.Keys {
			if o := dec.DecodeAt(kv.Key, kv.Value, kv.ModRevision); o.Object != nil {
				if r, err := table.Custom(o.Object); err == nil {
					out = append(out, r)
				}
			}
		}
		if p.Next == nil {
			return out, rev, nil
		}
		page = *p.Next
	}
}

// noResourceType is kubectl's error for a resource name the server serves
// no resource by (kubectl get's message for a NoResourceMatchError).
func noResourceType(name string) error {
	return fmt.Errorf("the server doesn't have a resource type %q", name)
}

// objectKey is the key of the one object args name, as kubectl names it:
// RESOURCE NAME, or RESOURCE/NAME, in namespace ns (default "default") when
// the resource is namespaced; or a key, which starts with "/" or is one
// word that names no resource, as compact_rev_key.
func objectKey(ctx context.Context, src etcdview.Source, dec decode.Decoder, args []string, ns string) (string, error) {
	kind, name, typed := strings.Cut(args[0], "/")
	switch {
	case typed && kind == "":
		if len(args) == 2 {
			return "", fmt.Errorf("a key takes no NAME: give %s alone, or a resource and a name", args[0])
		}
		if ns != "" {
			return "", errors.New("-n goes with a RESOURCE NAME: a key names its namespace itself")
		}
		return args[0], nil
	case typed && len(args) == 2:
		// kubectl's words for the same arguments.
		return "", errors.New("there is no need to specify a resource type as a separate argument when passing arguments in resource/name form")
	case len(args) == 2:
		name = args[1]
	}
	res, _, err := resolveResource(ctx, src, dec, kind, 0)
	switch {
	case err != nil:
		return "", err
	case res == nil && !typed && len(args) == 1 && ns == "":
		return args[0], nil
	case res == nil:
		return "", noResourceType(kind)
	case res.Singleton:
		return "", fmt.Errorf("%s is one object stored at %s: give that key", kind, res.KeyPrefix("", ""))
	case name == "":
		return "", fmt.Errorf("%s: give the NAME of the object too, or a key starting with /", args[0])
	case strings.Contains(name, "/"):
		return "", fmt.Errorf("%q: a NAME holds no /", name)
	case !res.Namespaced:
		ns = ""
	case ns == "":
		ns = "default"
	}
	return res.KeyPrefix("", ns) + name, nil
}
