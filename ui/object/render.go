package object

import (
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/dustin/go-humanize"
	"github.com/etcdscope/etcdscope/decode"
	"github.com/etcdscope/etcdscope/etcdview"
	"github.com/etcdscope/etcdscope/ui/common"
)

// maxRawBytes bounds the hex dump: a 1.5 MiB value would be 100k lines.
const maxRawBytes = 64 << 10

// Rendered is a value decoded and laid out for every view mode, made in the
// command that read it so that View only slices.
type Rendered struct {
	KV *etcdview.KV
	// Kind is the decoded object's kind, "" for a value that is no object.
	// The decoded object itself is not kept: on a large value it is several
	// times the size of the lines that show it.
	Kind     string
	Head     []common.Line // apiVersion and kind, or the label of a non-object
	Sections []Section
	JSON     []common.Line
	Raw      []common.Line
	Meta     []common.Line
}

// Section is one foldable part of the YAML view; Lines[0] is its heading.
type Section struct {
	Name  string
	Lines []common.Line
}

// Render decodes kv with d and lays it out.
func Render(s *common.Styles, d decode.Decoder, kv *etcdview.KV) Rendered {
	o := d.DecodeAt(kv.Key, kv.Value, kv.ModRevision)
	r := Rendered{KV: kv, Kind: o.GVK.Kind}
	if o.Object != nil {
		r.Head = s.YAMLLines(fmt.Sprintf("apiVersion: %s\nkind: %s", o.GVK.GroupVersion().String(), o.GVK.Kind))
	} else {
		r.Head = []common.Line{common.StyledLine(s.YAMLComment, "# "+o.Label())}
	}
	if o.Problem != "" {
		r.Head = append(r.Head, common.StyledLine(s.FlashErr, "# problem: "+o.Problem))
	}
	for _, sec := range o.Sections {
		lines := common.PlainLines(sec.Text)
		if o.Object != nil {
			lines = s.YAMLLines(sec.Text)
		} else {
			lines = append([]common.Line{common.StyledLine(s.YAMLComment, "# "+sec.Name)}, lines...)
		}
		r.Sections = append(r.Sections, Section{Name: sec.Name, Lines: lines})
	}
	if b, err := o.JSON(false); err == nil {
		r.JSON = s.YAMLLines(string(b))
	} else {
		r.JSON = common.PlainLines("# no JSON: " + err.Error())
	}
	r.Raw = rawLines(o, kv.Value)
	r.Meta = s.YAMLLines(metaText(kv, o))
	return r
}

// rawLines is the hex dump of the value, or, for a Secret stored in clear
// and masked, a note: its bytes are its values, and blanking their ranges
// in the dump would lean on the same protobuf walk a hostile value can
// mislead.
func rawLines(o decode.Object, value []byte) []common.Line {
	head := fmt.Sprintf("# %s, %d bytes (%s)", o.Format, len(value), humanize.IBytes(uint64(len(value))))
	if o.RawHidden() {
		return common.PlainLines(head + "\n# raw bytes of a Secret hold its values: x reveals them")
	}
	shown := value
	if len(shown) > maxRawBytes {
		shown = shown[:maxRawBytes]
		head += fmt.Sprintf(", first %s shown", humanize.IBytes(maxRawBytes))
	}
	return append(common.PlainLines(head), common.PlainLines(hex.Dump(shown))...)
}

func metaText(kv *etcdview.KV, o decode.Object) string {
	var b strings.Builder
	fmt.Fprintf(&b, "key: %s\n", decode.EscapeKey(kv.Key))
	fmt.Fprintf(&b, "createRevision: %d\nmodRevision: %d\nversion: %d\n", kv.CreateRevision, kv.ModRevision, kv.Version)
	fmt.Fprintf(&b, "lease: %d\n", kv.Lease)
	fmt.Fprintf(&b, "size: %d\nformat: %s\n", len(kv.Value), o.Format)
	if !o.GVK.Empty() {
		fmt.Fprintf(&b, "gvk: %s\n", o.GVK.String())
	}
	if o.Encryption != nil {
		fmt.Fprintf(&b, "encryption: %s\n", o.Encryption.String())
	}
	fmt.Fprintf(&b, "label: %q\n", o.Label())
	if o.Problem != "" {
		fmt.Fprintf(&b, "problem: %q\n", o.Problem)
	}
	return b.String()
}
