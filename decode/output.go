package decode

import (
	"bytes"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/client-go/kubernetes/scheme"
)

// Output formats of Render, spelled as kubectl and auger spell them.
const (
	OutputYAML  = "yaml"
	OutputJSON  = "json"
	OutputProto = "proto"
)

// Render prints o the way `etcdscope decode -o output` does. It fails, saying
// why, when the value holds no object at all (text, binary, still encrypted).
func Render(o Object, output string, metaOnly bool) ([]byte, error) {
	if o.view == nil && o.Object == nil {
		what := fmt.Sprintf("%d bytes of %s", o.Size, o.Format)
		if o.Problem != "" {
			what += ": " + o.Problem
		}
		value := "the value"
		if o.Key.Raw != "" {
			value = "the value of " + o.Key.String()
		}
		return nil, fmt.Errorf("cannot decode %s as a Kubernetes object (%s)", value, what)
	}
	switch output {
	case "", OutputYAML:
		if metaOnly {
			return []byte(o.MetaYAML()), nil
		}
		return []byte(o.Text()), nil
	case OutputJSON:
		return o.JSON(metaOnly)
	case OutputProto:
		if metaOnly {
			return nil, fmt.Errorf("--meta-only does not apply to -o proto")
		}
		return o.Proto()
	}
	return nil, fmt.Errorf("unknown output format %q: want yaml, json or proto", output)
}

// Proto encodes the object exactly as kube-apiserver stores it unencrypted
// ("k8s\x00" + runtime.Unknown). A kind of client-go's scheme read from JSON
// or CBOR is converted to its Go type first; a custom resource cannot be.
// A Secret's values cannot be masked in protobuf, so it is refused unless
// shown.
func (o Object) Proto() ([]byte, error) {
	obj := o.Object
	if u, ok := obj.(*unstructured.Unstructured); ok {
		typed, err := scheme.Scheme.New(o.GVK)
		if err != nil {
			return nil, fmt.Errorf("%s has no Go type in client-go's scheme to encode as protobuf", gvkString(o.GVK))
		}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, typed); err != nil {
			return nil, fmt.Errorf("convert %s to its Go type: %w", gvkString(o.GVK), err)
		}
		obj = typed
	}
	if obj == nil {
		return nil, fmt.Errorf("%s value holds no object to encode", o.Format)
	}
	if o.Masked() {
		return nil, fmt.Errorf("-o proto of a Secret prints its values: add --show-secrets")
	}
	var buf bytes.Buffer
	if err := protobuf.NewSerializer(scheme.Scheme, scheme.Scheme).Encode(obj, &buf); err != nil {
		return nil, fmt.Errorf("encode %s as protobuf: %w", gvkString(o.GVK), err)
	}
	return buf.Bytes(), nil
}
