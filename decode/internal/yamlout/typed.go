package yamlout

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/etcdscope/etcdscope/decode/internal/encjson"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The emitter also writes a typed object straight from its Go value: what
// encoding/json would write for it (the JSON decode's writesAsView vouches
// is the view's), as JSONToYAML writes that, without the JSON. Encoding the
// JSON and reading it back cost as much as writing the YAML; here the walk
// is the one pass, and a struct's keys are sorted once per type. It serves
// the types writesAsView accepts; anything else (a FieldsV1 in a nested
// managedFields, a NaN) says errNotWalked, and the JSON way is taken.

var errNotWalked = errors.New("a value the typed walk leaves to encoding/json")

// typedPlan is a struct type's fields as encoding/json writes them, in
// go-yaml's key order and in SectionOrder.
type typedPlan struct {
	fields, sections []typedField
}

type typedField struct {
	name      string
	key       *writtenKey // name as a simple key is written; nil when it is not one
	index     []int       // for FieldByIndex: through embedded structs
	omitEmpty bool
	isZero    func(reflect.Value) bool // omitzero's test; nil without omitzero
	how       int                      // marshallingOf the field's type
}

var typedPlans sync.Map // reflect.Type → *typedPlan

func planOf(t reflect.Type) *typedPlan {
	if p, ok := typedPlans.Load(t); ok {
		return p.(*typedPlan)
	}
	p := &typedPlan{}
	collectFields(t, nil, &p.fields)
	p.sections = slices.Clone(p.fields)
	slices.SortFunc(p.fields, func(a, b typedField) int {
		if yamlKeyLess(a.name, b.name) {
			return -1
		}
		return 1 // names are distinct (decode's writesAsView)
	})
	slices.SortFunc(p.sections, func(a, b typedField) int { return SectionOrder(a.name, b.name) })
	typedPlans.Store(t, p)
	return p
}

// collectFields lists t's fields as encoding/json names them, those of a
// struct embedded without a name in its place.
func collectFields(t reflect.Type, index []int, fields *[]typedField) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		at := append(slices.Clone(index), i)
		if f.Anonymous && name == "" {
			collectFields(f.Type, at, fields)
			continue
		}
		if name == "" {
			name = f.Name
		}
		field := typedField{name: name, index: at, how: marshallingOf(f.Type)}
		if len(name) <= 128 && !analyzeScalar(name).multiline {
			k := writtenKeyOf(name)
			field.key = &k
		}
		for opt := range strings.SplitSeq(opts, ",") {
			switch opt {
			case "omitempty":
				field.omitEmpty = true
			case "omitzero":
				field.isZero = zeroTest(f.Type)
			}
		}
		*fields = append(*fields, field)
	}
}

type isZeroer interface{ IsZero() bool }

var isZeroerType = reflect.TypeFor[isZeroer]()

// zeroTest is encoding/json's omitzero test for a field of type t: its
// IsZero method when it has one (through a pointer when the method is on
// *t), else the zero value.
func zeroTest(t reflect.Type) func(reflect.Value) bool {
	switch {
	case t.Kind() == reflect.Pointer && t.Implements(isZeroerType):
		return func(v reflect.Value) bool { return v.IsNil() || v.Interface().(isZeroer).IsZero() }
	case t.Implements(isZeroerType):
		return func(v reflect.Value) bool { return v.Interface().(isZeroer).IsZero() }
	case reflect.PointerTo(t).Implements(isZeroerType):
		return func(v reflect.Value) bool {
			if !v.CanAddr() {
				c := reflect.New(v.Type()).Elem()
				c.Set(v)
				v = c
			}
			return v.Addr().Interface().(isZeroer).IsZero()
		}
	}
	return reflect.Value.IsZero
}

// omitted says whether encoding/json leaves the field out.
func (f *typedField) omitted(v reflect.Value) bool {
	if f.isZero != nil && f.isZero(v) {
		return true
	}
	if !f.omitEmpty {
		return false
	}
	switch v.Kind() {
	case reflect.Slice, reflect.Map, reflect.String:
		return v.Len() == 0
	case reflect.Bool:
		return !v.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int() == 0
	case reflect.Uint8, reflect.Uint16, reflect.Uint32:
		return v.Uint() == 0
	case reflect.Float64:
		return v.Float() == 0
	case reflect.Pointer:
		return v.IsNil()
	}
	return false
}

// writtenKeyOf is how name is written as a simple key (see
// yamlEmitter.simpleKeys).
func writtenKeyOf(name string) writtenKey {
	var e yamlEmitter
	e.begin(nil, 0)
	e.stringScalar(name, analyzeScalar(name), yamlContext{mapping: true, simpleKey: true})
	return writtenKey{string(e.out), e.column}
}

// typedMember is a field or map entry being written: its name as JSON has
// it and its value; a field's key as written, a map entry's key as it was
// (see typedMap), and a string value apart.
type typedMember struct {
	name  string
	key   *writtenKey
	raw   string
	value reflect.Value
	how   int
	text  string // the value of a map entry of strings; value is not set
}

// TypedSections is Sections for obj, a pointer to a struct decode's
// writesAsView accepts.
func TypedSections(dst []byte, obj any, folded string) ([]byte, []Top, error) {
	e := yamlEmitters.Get().(*yamlEmitter)
	defer e.release()
	e.begin(dst, -1)
	v := reflect.ValueOf(obj).Elem()
	members := e.present(v, planOf(v.Type()).sections)
	if len(members) == 0 {
		return dst, nil, nil
	}
	tops, err := e.writeSections(len(members), func(i int) string { return members[i].name },
		func(i int) error { return e.typedValue(members[i].value, members[i].how, yamlContext{mapping: true}) }, folded)
	return e.out, tops, err
}

// TypedItem is Item for obj, as TypedSections.
func TypedItem(dst []byte, obj any) ([]byte, error) {
	e := yamlEmitters.Get().(*yamlEmitter)
	defer e.release()
	e.begin(dst, 0)
	e.writeIndicator("-", true, false, true)
	v := reflect.ValueOf(obj)
	err := e.typedValue(v, marshallingOf(v.Type()), yamlContext{})
	e.indent = 0
	e.writeIndent()
	return e.out, err
}

// present pushes v's fields that encoding/json writes on e.typed, in the
// order of fields, and returns them.
func (e *yamlEmitter) present(v reflect.Value, fields []typedField) []typedMember {
	base := len(e.typed)
	for i := range fields {
		f := &fields[i]
		var fv reflect.Value
		if len(f.index) == 1 {
			fv = v.Field(f.index[0])
		} else {
			fv = v.FieldByIndex(f.index)
		}
		if !f.omitted(fv) {
			e.typed = append(e.typed, typedMember{name: f.name, key: f.key, value: fv, how: f.how})
		}
	}
	return e.typed[base:]
}

// typedValue writes v, whose type marshals as how says.
func (e *yamlEmitter) typedValue(v reflect.Value, how int, ctx yamlContext) error {
	for v.Kind() == reflect.Pointer {
		if v.IsNil() {
			e.scalar("null", numberShape, yamlPlain, ctx)
			return nil
		}
		v = v.Elem()
	}
	switch how {
	case marshalsItself:
		return e.marshalledScalar(v, ctx)
	case marshalsOtherwise:
		return errNotWalked
	}
	switch v.Kind() {
	case reflect.Struct:
		base := len(e.typed)
		defer func() { e.typed = e.typed[:base] }()
		return e.typedMapping(e.present(v, planOf(v.Type()).fields))
	case reflect.Map:
		return e.typedMap(v, ctx)
	case reflect.Slice:
		return e.typedSlice(v, ctx)
	case reflect.String:
		e.goString(v.String(), ctx)
	case reflect.Bool:
		e.scalar(strconv.FormatBool(v.Bool()), numberShape, yamlPlain, ctx)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		e.scalar(strconv.FormatInt(v.Int(), 10), numberShape, yamlPlain, ctx)
	case reflect.Uint8, reflect.Uint16, reflect.Uint32:
		e.scalar(strconv.FormatUint(v.Uint(), 10), numberShape, yamlPlain, ctx)
	case reflect.Float64:
		f := v.Float()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return errNotWalked // encoding/json refuses it
		}
		e.scalar(e.numberText(jsonFloat(f)), numberShape, yamlPlain, ctx)
	default:
		return errNotWalked
	}
	return nil
}

// How encoding/json writes a type: by its fields and elements, by one of
// encjson.MarshalsAsView's MarshalJSON, or otherwise (another marshaller).
const (
	marshalsPlainly = iota
	marshalsItself
	marshalsOtherwise
)

var marshallings sync.Map // reflect.Type → int

// marshallingOf is how encoding/json writes a value of type t, or what t
// points to.
func marshallingOf(t reflect.Type) int {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if m, ok := marshallings.Load(t); ok {
		return m.(int)
	}
	m := marshalsPlainly
	switch {
	case encjson.MarshalsAsView(t):
		m = marshalsItself
	case encjson.CustomJSON(t):
		m = marshalsOtherwise
	}
	marshallings.Store(t, m)
	return m
}

// typedMapping writes members as a block mapping, or {} when there are none.
func (e *yamlEmitter) typedMapping(members []typedMember) error {
	if len(members) == 0 {
		e.emptyFlow("{}")
		return nil
	}
	outer := e.enterMapping()
	defer func() { e.indent = outer }()
	for _, m := range members {
		e.writeIndent()
		if m.key != nil {
			e.putKey(*m.key)
		} else {
			e.writeKey(m.name)
		}
		if m.value.IsValid() {
			if err := e.typedValue(m.value, m.how, yamlContext{mapping: true}); err != nil {
				return err
			}
			continue
		}
		e.goString(m.text, yamlContext{mapping: true})
	}
	return nil
}

// typedMap writes a map as encoding/json writes it (keys made UTF-8, in
// the order of the keys as they were), read back by go-yaml (a key made
// twice keeps the later value) and sorted by go-yaml.
func (e *yamlEmitter) typedMap(v reflect.Value, ctx yamlContext) error {
	if v.IsNil() {
		e.scalar("null", numberShape, yamlPlain, ctx)
		return nil
	}
	base := len(e.typed)
	defer func() { e.typed = e.typed[:base] }()
	t := v.Type()
	key, how := reflect.New(t.Key()).Elem(), marshallingOf(t.Elem())
	// The entries of a map of strings (labels, annotations, data) are
	// read without a copy of each value.
	var text reflect.Value
	if t.Elem().Kind() == reflect.String && how == marshalsPlainly {
		text = reflect.New(t.Elem()).Elem()
	}
	for it := v.MapRange(); it.Next(); {
		key.SetIterKey(it)
		m := typedMember{name: jsonText(key.String()), raw: key.String(), how: how}
		if text.IsValid() {
			text.SetIterValue(it)
			m.text = text.String()
		} else {
			m.value = it.Value()
		}
		e.typed = append(e.typed, m)
	}
	members := e.typed[base:]
	slices.SortFunc(members, func(a, b typedMember) int {
		switch {
		case a.name != b.name && yamlKeyLess(a.name, b.name):
			return -1
		case a.name != b.name:
			return 1
		}
		return strings.Compare(a.raw, b.raw)
	})
	keep := members[:0]
	for i, m := range members {
		if i+1 < len(members) && members[i+1].name == m.name {
			continue
		}
		keep = append(keep, m)
	}
	return e.typedMapping(keep)
}

func (e *yamlEmitter) typedSlice(v reflect.Value, ctx yamlContext) error {
	switch {
	case v.IsNil():
		e.scalar("null", numberShape, yamlPlain, ctx)
		return nil
	case v.Type().Elem().Kind() == reflect.Uint8:
		s := base64.StdEncoding.EncodeToString(v.Bytes())
		e.stringScalar(s, analyzeScalar(s), ctx)
		return nil
	case v.Len() == 0:
		e.emptyFlow("[]")
		return nil
	}
	outer := e.enterSequence(ctx)
	defer func() { e.indent = outer }()
	how := marshallingOf(v.Type().Elem())
	for i := range v.Len() {
		e.startItem()
		if err := e.typedValue(v.Index(i), how, yamlContext{}); err != nil {
			return err
		}
	}
	return nil
}

// marshalledScalar writes what the MarshalJSON of one of the types of
// encjson.MarshalsAsView writes: a string, a number or null. A time is
// written as its MarshalJSON writes it (null when zero, else RFC 3339 in
// UTC, to the second or microsecond) without the JSON around it: objects
// hold several.
func (e *yamlEmitter) marshalledScalar(v reflect.Value, ctx yamlContext) error {
	var t time.Time
	layout := time.RFC3339
	switch x := v.Interface().(type) {
	case metav1.Time:
		t = x.Time
	case metav1.MicroTime:
		t, layout = x.Time, metav1.RFC3339Micro
	}
	if !t.IsZero() {
		s := t.UTC().Format(layout)
		e.stringScalar(s, analyzeScalar(s), ctx)
		return nil
	}
	js, err := v.Interface().(json.Marshaler).MarshalJSON()
	if err != nil || len(js) == 0 {
		return errNotWalked
	}
	if js[0] != '"' {
		e.scalar(e.numberText(string(js)), numberShape, yamlPlain, ctx)
		return nil
	}
	var s string
	if inner := js[1 : len(js)-1]; bytes.IndexByte(inner, '\\') < 0 {
		s = string(inner) // a time, a quantity: nothing escaped
	} else if err := json.Unmarshal(js, &s); err != nil {
		return errNotWalked
	}
	e.stringScalar(s, analyzeScalar(s), ctx)
	return nil
}

// goString writes s, a string of the Go value, as stringScalar writes
// jsonText(s), then puts back in place of each U+FFFD that stands for a
// byte that is not UTF-8 that byte: the one place the emitter parts from
// sigs.k8s.io/yaml, whose U+FFFD comes from encoding/json. Gogo protobuf
// keeps a stored string's bytes as they are, and Inert shows such a byte
// as \xff, which U+FFFD would hide. The scalar's style and folding are
// those of jsonText(s). Should the emitter have escaped a U+FFFD (after a
// leading BOM it escapes every rune), the scalar keeps jsonText(s).
func (e *yamlEmitter) goString(s string, ctx yamlContext) {
	if utf8.ValidString(s) {
		e.stringScalar(s, analyzeScalar(s), ctx)
		return
	}
	stand := jsonText(s)
	start := len(e.out)
	e.stringScalar(stand, analyzeScalar(stand), ctx)
	written := e.out[start:]
	if bytes.Count(written, replacement) != strings.Count(stand, string(utf8.RuneError)) {
		return
	}
	restored := make([]byte, 0, len(written))
	for i := 0; ; {
		j := bytes.Index(written, replacement)
		if j < 0 {
			restored = append(restored, written...)
			break
		}
		restored = append(restored, written[:j]...)
		written = written[j+len(replacement):]
		r, n := utf8.DecodeRuneInString(s[i:])
		for r != utf8.RuneError {
			i += n
			r, n = utf8.DecodeRuneInString(s[i:])
		}
		if n == 1 {
			restored = append(restored, s[i]) // the byte U+FFFD stood for
		} else {
			restored = append(restored, replacement...) // a U+FFFD of s
		}
		i += n
	}
	e.out = append(e.out[:start], restored...)
}

var replacement = []byte(string(utf8.RuneError))

// jsonText is s as encoding/json writes it, read back: each byte that is
// not UTF-8 becomes U+FFFD.
func jsonText(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		b.WriteRune(r) // RuneError for a byte that is not UTF-8
		i += n
	}
	return b.String()
}

// jsonFloat is f as encoding/json writes a float64: the shortest decimal
// that reads back, in exponent form below 1e-6 and from 1e21, with a
// one-digit negative exponent written as such.
func jsonFloat(f float64) string {
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b := strconv.AppendFloat(nil, f, format, -1, 64)
	if n := len(b); format == 'e' && n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
		b[n-2] = b[n-1]
		b = b[:n-1]
	}
	return string(b)
}
