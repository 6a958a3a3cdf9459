package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/etcdscope/etcdscope/decode"
	"github.com/etcdscope/etcdscope/etcdview"
	"github.com/etcdscope/etcdscope/etcdview/resource"
)

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
	res, _, err := resource.Resolve(ctx, src, dec, kind, 0)
	switch {
	case err != nil:
		return "", err
	case res == nil && !typed && len(args) == 1 && ns == "":
		return args[0], nil
	case res == nil:
		return "", resource.NoType(kind)
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
