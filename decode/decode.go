// Package decode turns etcd keys and values written by kube-apiserver into
// objects a person can read: metadata, spec, status, as kubectl shows them.
// It does no I/O.
package decode

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Format is how a value was stored.
type Format string

// Every Object carries one of these.
const (
	FormatProtobuf        Format = "protobuf"         // "k8s\x00" + runtime.Unknown, kind in client-go's scheme
	FormatUnknownProtobuf Format = "unknown-protobuf" // the envelope, but a kind this build does not know
	FormatJSON            Format = "json"             // custom resources, CRDs, APIServices, --storage-media-type=application/json
	FormatCBOR            Format = "cbor"             // custom resources behind the CBOR feature gates
	FormatEncrypted       Format = "encrypted"        // "k8s:enc:..." that could not be decrypted
	FormatText            Format = "text"             // anything else that is UTF-8
	FormatBinary          Format = "binary"           // anything else
)

// Object is one decoded etcd value. Decode always returns one, however bad
// the bytes: Format says what they are and Problem why decoding stopped short.
type Object struct {
	Key    Key
	Format Format
	GVK    schema.GroupVersionKind // zero when not known
	Size   int                     // bytes of the value as stored in etcd
	// Encryption is set when the value was encrypted at rest, whether or not
	// it could be decrypted.
	Encryption *EncryptionInfo
	// Object is the typed object from client-go's scheme, or an
	// *unstructured.Unstructured for JSON and CBOR; nil when there is none.
	Object   runtime.Object
	Sections []Section
	Problem  string // plain words, "" when the value decoded fully

	// view is the object as rendered (secrets masked, managedFields
	// folded) as a JSON-shaped map; nil for a typed object rendered from
	// its JSON (see render, fieldView).
	view map[string]any
	// rendered is true when the value holds an object: yaml is its YAML,
	// head (apiVersion and kind) then the first fields Sections; the
	// Sections after are dumps.
	rendered bool
	yaml     string
	head     string
	fields   int
	options  Decoder
	// changed names the masked values that differ from the other side of
	// a diff (see masker).
	changed map[string]bool
}

// Section is one titled part of an Object's rendering.
type Section struct {
	Name string // "metadata", "spec", "status", another top-level field, or "value", "fields", "encryption"
	Text string // YAML for object fields, the text or a hex dump otherwise
}

// Decoder decodes with options; its zero value is what Decode uses.
type Decoder struct {
	Keys KeyParser
	// Encryption decrypts values encrypted at rest; nil leaves them labelled
	// with provider and key name.
	Encryption *Encryption
	// ShowSecrets reveals a Secret's values, otherwise masked in every
	// rendering (see masker) and its raw bytes withheld (RawHidden).
	ShowSecrets bool
	// ShowManagedFields keeps metadata.managedFields, otherwise folded to a
	// one-line summary as kubectl omits them.
	ShowManagedFields bool
	// JSONOnly renders no YAML: the object's sections stay out of
	// Sections, so YAML and Text are empty and JSON (or AppendYAMLItem) is
	// all there is. For callers that print a List: the sections are most
	// of a decode's time.
	JSONOnly bool
}

// Decode decodes value stored at key with default options.
func Decode(key string, value []byte) Object { return Decoder{}.Decode(key, value) }

// Decode decodes value stored at key. metadata.resourceVersion stays as
// stored (the API server clears it before writing); see DecodeAt.
func (d Decoder) Decode(key string, value []byte) Object { return d.DecodeAt(key, value, 0) }

// DecodeAt decodes value stored at key and, when modRevision > 0, sets
// metadata.resourceVersion to it as the API server does on every read
// (etcd3 store: APIObjectVersioner.UpdateObject with the kv's ModRevision),
// so two revisions of an object differ in it only as kubectl would show.
func (d Decoder) DecodeAt(key string, value []byte, modRevision int64) (o Object) {
	o = Object{Key: d.Keys.Parse(key), Size: len(value), options: d}
	defer func() {
		// Generated protobuf unmarshallers, the CBOR library and the
		// unstructured converter make no promise about hostile bytes; a
		// value that trips one must still come back labelled.
		if r := recover(); r != nil {
			o.Object, o.view, o.rendered, o.yaml, o.head, o.fields = nil, nil, false, "", "", 0
			o.Problem = fmt.Sprintf("decoder failed on this value: %v", r)
			if o.Format == "" {
				o.Format = FormatBinary
			}
			o.Sections = []Section{dumpSection(value)}
		}
		maskUndecoded(&o)
	}()

	data := value
	if bytes.HasPrefix(data, encryptedPrefix) {
		plain, info, problem := d.decrypt(o.Key, data)
		o.Encryption = info
		if problem != "" {
			o.Format, o.Problem = FormatEncrypted, problem
			o.Sections = []Section{info.section(len(data))}
			return o
		}
		data = plain
	}

	switch {
	case bytes.HasPrefix(data, protobufPrefix):
		decodeProtobuf(&o, data)
	case bytes.HasPrefix(data, cborPrefix):
		decodeCBOR(&o, data)
	case looksLikeJSON(data):
		decodeJSON(&o, data)
	default:
		decodeText(&o, data)
	}
	if o.Encryption != nil && (o.Format == FormatText || o.Format == FormatBinary) {
		o.Format = FormatEncrypted
		o.Problem = fmt.Sprintf("decrypted with %s but the result is not a Kubernetes object: the key's secret is probably wrong", o.Encryption)
		o.Sections = []Section{o.Encryption.section(len(value))}
		return o
	}
	if o.Object != nil {
		if modRevision > 0 {
			if m, err := meta.Accessor(o.Object); err == nil {
				m.SetResourceVersion(strconv.FormatInt(modRevision, 10))
			}
		}
		o.render()
	}
	return o
}

// Label is a one-line description: format, kind, size, encryption, problem.
func (o Object) Label() string {
	var b strings.Builder
	b.WriteString(string(o.Format))
	if !o.GVK.Empty() {
		fmt.Fprintf(&b, " %s", gvkString(o.GVK))
	}
	fmt.Fprintf(&b, ", %d bytes", o.Size)
	if o.Encryption != nil && o.Format != FormatEncrypted {
		fmt.Fprintf(&b, ", decrypted (%s)", o.Encryption)
	}
	if o.Problem != "" {
		fmt.Fprintf(&b, ": %s", o.Problem)
	}
	return b.String()
}

func gvkString(gvk schema.GroupVersionKind) string {
	apiVersion, kind := gvk.ToAPIVersionAndKind()
	return apiVersion + " " + kind
}
