package decode

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"
)

// rawField is one protobuf field read without a schema, as protoc
// --decode_raw reads it.
type rawField struct {
	Num    protowire.Number
	Type   protowire.Type
	Scalar uint64     // varint, fixed32, fixed64
	Bytes  []byte     // length-delimited
	Msg    []rawField // Bytes parsed as a message, when they look like one
	IsText bool       // Bytes shown as a string
}

// maxRawDepth bounds nesting: a hostile value of nested one-byte messages
// would otherwise recurse once per two bytes.
const maxRawDepth = 32

// walkFields reads fields until the bytes end or stop parsing, and says what
// is left over when they stop ("" when they ended cleanly).
func walkFields(b []byte, depth int) (fields []rawField, tail string) {
	start := len(b)
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return fields, fmt.Sprintf("%d bytes at offset %d do not parse: %v", len(b), start-len(b), protowire.ParseError(n))
		}
		f := rawField{Num: num, Type: typ}
		var m int
		switch typ {
		case protowire.VarintType:
			f.Scalar, m = protowire.ConsumeVarint(b[n:])
		case protowire.Fixed32Type:
			var v uint32
			v, m = protowire.ConsumeFixed32(b[n:])
			f.Scalar = uint64(v)
		case protowire.Fixed64Type:
			f.Scalar, m = protowire.ConsumeFixed64(b[n:])
		case protowire.BytesType:
			f.Bytes, m = protowire.ConsumeBytes(b[n:])
			if m >= 0 {
				f.classify(depth)
			}
		default:
			// Groups are deprecated and Kubernetes never writes them.
			m = protowire.ConsumeFieldValue(num, typ, b[n:])
		}
		if m < 0 {
			return fields, fmt.Sprintf("field %d at offset %d is cut short or malformed: %v", num, start-len(b), protowire.ParseError(m))
		}
		fields = append(fields, f)
		b = b[n+m:]
	}
	return fields, ""
}

// classify decides how to show length-delimited bytes: printable text stays
// text (short ASCII often parses as a message by accident), bytes that parse
// cleanly as a message are one, other UTF-8 is text, the rest stays bytes.
func (f *rawField) classify(depth int) {
	if printable(f.Bytes, false) {
		f.IsText = true
		return
	}
	if depth < maxRawDepth {
		if msg, tail := walkFields(f.Bytes, depth+1); tail == "" && len(msg) > 0 && plausible(msg) {
			f.Msg = msg
			return
		}
	}
	f.IsText = printable(f.Bytes, true)
}

func printable(b []byte, whitespace bool) bool {
	if !utf8.Valid(b) {
		return false
	}
	for _, r := range string(b) {
		if !unicode.IsPrint(r) && !(whitespace && unicode.IsSpace(r)) {
			return false
		}
	}
	return true
}

// plausible rejects parses with field numbers no Kubernetes message uses:
// random bytes that parse as a message tend to have huge ones.
func plausible(msg []rawField) bool {
	for _, f := range msg {
		if f.Num > 10000 || f.Type == protowire.StartGroupType || f.Type == protowire.EndGroupType {
			return false
		}
	}
	return true
}

// dumpFields renders fields one per line, nested messages indented.
func dumpFields(fields []rawField, tail string) string {
	var b strings.Builder
	writeFields(&b, fields, "")
	if tail != "" {
		fmt.Fprintf(&b, "# stopped: %s\n", tail)
	}
	return b.String()
}

func writeFields(b *strings.Builder, fields []rawField, indent string) {
	for _, f := range fields {
		switch {
		case f.Type == protowire.VarintType:
			fmt.Fprintf(b, "%s%d varint: %d\n", indent, f.Num, f.Scalar)
		case f.Type == protowire.Fixed32Type:
			fmt.Fprintf(b, "%s%d fixed32: %d  # float %g\n", indent, f.Num, f.Scalar, math.Float32frombits(uint32(f.Scalar)))
		case f.Type == protowire.Fixed64Type:
			fmt.Fprintf(b, "%s%d fixed64: %d  # double %g\n", indent, f.Num, f.Scalar, math.Float64frombits(f.Scalar))
		case f.Msg != nil:
			fmt.Fprintf(b, "%s%d message:  # %d bytes\n", indent, f.Num, len(f.Bytes))
			writeFields(b, f.Msg, indent+"  ")
		case f.IsText:
			fmt.Fprintf(b, "%s%d string: %s\n", indent, f.Num, strconv.Quote(string(f.Bytes)))
		case f.Type == protowire.BytesType:
			fmt.Fprintf(b, "%s%d bytes: %s\n", indent, f.Num, strconv.QuoteToASCII(string(f.Bytes)))
		default:
			fmt.Fprintf(b, "%s%d %s\n", indent, f.Num, wireName(f.Type))
		}
	}
}

func wireName(t protowire.Type) string {
	switch t {
	case protowire.StartGroupType:
		return "group"
	case protowire.EndGroupType:
		return "end-group"
	}
	return fmt.Sprintf("wire-type-%d", t)
}
