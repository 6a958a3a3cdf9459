package decode

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"google.golang.org/protobuf/encoding/protowire"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
)

// protobufPrefix is the magic k8s.io/apimachinery/pkg/runtime/serializer/protobuf
// writes before a runtime.Unknown message holding the object.
var protobufPrefix = []byte("k8s\x00")

// Field numbers of runtime.Unknown (k8s.io/apimachinery/pkg/runtime/generated.proto).
var unknownFieldNames = map[protowire.Number]string{1: "typeMeta", 2: "raw", 3: "contentEncoding", 4: "contentType"}

type protoUnmarshaler interface {
	runtime.Object
	Unmarshal([]byte) error
}

// decodeProtobuf mirrors protobuf.Serializer.Decode: unwrap the envelope, make
// the kind it names from the scheme, unmarshal its raw bytes into it. Unlike
// the serializer it keeps going when a step fails, to show what is there.
func decodeProtobuf(o *Object, data []byte) {
	o.Format = FormatProtobuf
	if len(data) == len(protobufPrefix) {
		o.Format = FormatUnknownProtobuf
		o.Problem = "empty envelope: the value is only the k8s\\x00 magic"
		return
	}
	var unk runtime.Unknown
	err := unk.Unmarshal(data[len(protobufPrefix):])
	if err != nil && bytes.HasSuffix(data, []byte("\n")) {
		// `etcdctl get --print-value-only` appends a newline. A whole
		// envelope never ends in a lone 0x0a: that is the tag of field 1
		// with no length after it, so dropping it is safe.
		var trimmed runtime.Unknown
		if trimmed.Unmarshal(data[len(protobufPrefix):len(data)-1]) == nil {
			unk, err = trimmed, nil
		}
	}
	if err != nil {
		o.Problem = envelopeProblem(data, err)
		salvageEnvelope(o, data[len(protobufPrefix):])
		return
	}
	o.GVK = schema.FromAPIVersionAndKind(unk.APIVersion, unk.Kind)
	if unk.ContentType == runtime.ContentTypeJSON {
		decodeJSON(o, unk.Raw)
		return
	}
	if o.GVK.Kind == "" {
		o.Format = FormatUnknownProtobuf
		o.Problem = "the envelope names no kind; showing the raw protobuf fields"
		rawObject(o, unk.Raw)
		return
	}
	obj, err := scheme.Scheme.New(o.GVK)
	if err != nil {
		o.Format = FormatUnknownProtobuf
		o.Problem = fmt.Sprintf("%s is not a kind this build knows (client-go's scheme); showing the raw protobuf fields", gvkString(o.GVK))
		rawObject(o, unk.Raw)
		return
	}
	um, ok := obj.(protoUnmarshaler)
	if !ok {
		o.Format = FormatUnknownProtobuf
		o.Problem = fmt.Sprintf("%T has no protobuf unmarshaller; showing the raw protobuf fields", obj)
		rawObject(o, unk.Raw)
		return
	}
	if err := um.Unmarshal(unk.Raw); err != nil {
		o.Problem = fmt.Sprintf("the %s in the envelope does not parse: %v", o.GVK.Kind, err)
		rawObject(o, unk.Raw)
		return
	}
	obj.GetObjectKind().SetGroupVersionKind(o.GVK)
	o.Object = obj
}

// envelopeProblem walks the envelope field by field to say where it breaks.
func envelopeProblem(data []byte, err error) string {
	start := len(protobufPrefix)
	for b, off := data[start:], start; len(b) > 0; {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return fmt.Sprintf("envelope breaks at byte %d: %v", off, protowire.ParseError(n))
		}
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if m < 0 {
			name := unknownFieldNames[num]
			if name == "" {
				name = "unknown field"
			}
			if l, k := protowire.ConsumeVarint(b[n:]); typ == protowire.BytesType && k > 0 {
				return fmt.Sprintf("truncated envelope at byte %d: field %d (%s) starting at byte %d declares %d bytes, %d are there",
					len(data), num, name, off, l, len(b)-n-k)
			}
			if errors.Is(protowire.ParseError(m), io.ErrUnexpectedEOF) {
				return fmt.Sprintf("truncated envelope at byte %d: field %d (%s) is cut short", len(data), num, name)
			}
			return fmt.Sprintf("envelope breaks at byte %d, field %d (%s): %v", off, num, name, protowire.ParseError(m))
		}
		b, off = b[n+m:], off+n+m
	}
	return "envelope does not parse: " + err.Error()
}

// salvageEnvelope reads what a broken envelope still holds: the kind when
// typeMeta is whole, and whatever fields of the object precede the break.
func salvageEnvelope(o *Object, b []byte) {
	var raw []byte
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			break
		}
		b = b[n:]
		if typ != protowire.BytesType {
			if m := protowire.ConsumeFieldValue(num, typ, b); m >= 0 {
				b = b[m:]
				continue
			}
			break
		}
		v, m := protowire.ConsumeBytes(b)
		if m < 0 {
			// A cut-off field: keep its available bytes.
			if _, k := protowire.ConsumeVarint(b); k > 0 && num == 2 {
				raw = b[k:]
			}
			break
		}
		switch num {
		case 1:
			var tm runtime.TypeMeta
			if tm.Unmarshal(v) == nil {
				o.GVK = schema.FromAPIVersionAndKind(tm.APIVersion, tm.Kind)
			}
		case 2:
			raw = v
		}
		b = b[m:]
	}
	if o.GVK.Empty() {
		o.Format = FormatUnknownProtobuf
	}
	rawObject(o, raw)
}

// rawObject shows an object's protobuf bytes without its Go type: ObjectMeta
// when field 1 parses as one (every Kubernetes kind declares
// "optional ObjectMeta metadata = 1"), and a dump of every field.
func rawObject(o *Object, raw []byte) {
	fields, tail := walkFields(raw, 0)
	view := map[string]any{}
	if !o.GVK.Empty() {
		view["apiVersion"], view["kind"] = o.GVK.ToAPIVersionAndKind()
	}
	if m := objectMetaFrom(fields); m != nil {
		if u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(m); err == nil {
			view["metadata"] = u
		}
	}
	o.renderView(view)
	o.Sections = append(o.Sections, Section{Name: "fields", Text: dumpFields(fields, tail)})
}

func objectMetaFrom(fields []rawField) *metav1.ObjectMeta {
	if len(fields) == 0 || fields[0].Num != 1 || fields[0].Type != protowire.BytesType {
		return nil
	}
	var m metav1.ObjectMeta
	if m.Unmarshal(fields[0].Bytes) != nil {
		return nil
	}
	if m.Name == "" && m.GenerateName == "" && m.UID == "" && m.CreationTimestamp.IsZero() {
		return nil
	}
	return &m
}
