package decode

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/aymanbagabas/go-udiff"
	"k8s.io/apimachinery/pkg/api/meta"
)

// Change is one field that differs between two revisions.
type Change struct {
	Path     string // "spec.replicas", "spec.template.spec.containers[0].image"
	Old, New string // compact renderings, "∅" when absent
}

func (c Change) String() string { return c.Path + " " + c.Old + "→" + c.New }

// Difference is what changed between two decoded values of one key.
type Difference struct {
	// Unified is a unified diff of the renderings, "" when they are equal.
	// metadata.resourceVersion is in its labels (key@rev), not its body.
	Unified string
	Changes []Change // changed leaf fields in document order, resourceVersion left out
	// rendersDiffer is true when the renderings differ (Unified is not
	// empty, when computed), revisionsDiffer when the two sides are
	// different revisions.
	rendersDiffer, revisionsDiffer bool
}

// maxSummaryChanges bounds the one-line summary; the unified diff has all.
const maxSummaryChanges = 8

// Summary lists the changed field paths on one line:
// "spec.replicas 3→5, status.readyReplicas 3→4".
func (d Difference) Summary() string {
	if len(d.Changes) == 0 {
		if d.rendersDiffer || d.revisionsDiffer {
			return "only metadata.resourceVersion changed"
		}
		return "no change"
	}
	parts := make([]string, 0, maxSummaryChanges+1)
	for i, c := range d.Changes {
		if i == maxSummaryChanges {
			parts = append(parts, fmt.Sprintf("and %d more", len(d.Changes)-i))
			break
		}
		parts = append(parts, c.String())
	}
	return strings.Join(parts, ", ")
}

// Diff compares two decoded values, normally two revisions of one key. The
// renderings are compared as shown (secrets masked unless shown, managedFields
// folded), so the diff never reveals what the view hides; a masked value
// that changed says so on the new side ("<28 bytes, changed>"), its length
// alone may not.
func Diff(old, new Object) Difference {
	new = new.markChanges(old)
	d := compare(old, new)
	if d.rendersDiffer {
		d.Unified = udiff.Unified(diffLabel(old), diffLabel(new), withoutResourceVersion(old), withoutResourceVersion(new))
	}
	return d
}

// DiffSummary is Diff(old, new).Summary() without the unified diff, which
// costs most of a Diff: for a list of many revisions.
func DiffSummary(old, new Object) string { return compare(old, new.markChanges(old)).Summary() }

// markChanges is o rendered again with the masks of the values that differ
// from old's marked, when both are masked Secrets and any does; else o.
func (o Object) markChanges(old Object) Object {
	if !o.options.masks(o.GVK) || !old.options.masks(old.GVK) || o.Object == nil || old.Object == nil {
		return o
	}
	ov, err := old.newView()
	if err != nil {
		return o
	}
	nv, err := o.newView()
	if err != nil {
		return o
	}
	if o.changed = changedValues(ov, nv); o.changed == nil {
		return o
	}
	o.view = nil
	o.render()
	return o
}

func compare(old, new Object) Difference {
	d := Difference{
		rendersDiffer:   withoutResourceVersion(old) != withoutResourceVersion(new),
		revisionsDiffer: old.resourceVersion() != new.resourceVersion(),
	}
	if ov, nv := old.fieldView(), new.fieldView(); ov != nil && nv != nil {
		d.Changes = changes(nil, "", ov, nv)
	} else if d.rendersDiffer {
		d.Changes = []Change{{Path: "value", Old: sizeLabel(old), New: sizeLabel(new)}}
	}
	return d
}

func diffLabel(o Object) string {
	if rv := o.resourceVersion(); rv != "" {
		return o.Key.String() + "@" + rv
	}
	return o.Key.String()
}

// withoutResourceVersion is o's rendering without metadata.resourceVersion:
// the diff's labels name each side's revision, and in the body the line
// would differ between any two revisions, hiding nothing but adding noise.
func withoutResourceVersion(o Object) string {
	text, rv := o.Text(), o.resourceVersion()
	start := strings.Index(text, "metadata:\n")
	if rv == "" || start < 0 || (start > 0 && text[start-1] != '\n') {
		return text
	}
	// The metadata block ends at the next line that is not indented.
	end := len(text)
	for i := start + len("metadata:\n"); i < len(text); {
		next := strings.IndexByte(text[i:], '\n')
		if text[i] != ' ' && text[i] != '-' {
			end = i
			break
		}
		if next < 0 {
			break
		}
		i += next + 1
	}
	block := strings.Replace(text[start:end], "\n  resourceVersion: \""+rv+"\"\n", "\n", 1)
	return text[:start] + block + text[end:]
}

func sizeLabel(o Object) string { return fmt.Sprintf("%s(%d bytes)", o.Format, o.Size) }

func (o Object) resourceVersion() string {
	if o.view == nil && o.Object != nil {
		if m, err := meta.Accessor(o.Object); err == nil {
			return m.GetResourceVersion()
		}
	}
	md, _ := o.view["metadata"].(map[string]any)
	rv, _ := md["resourceVersion"].(string)
	return rv
}

// changes walks both trees in key order; lists of equal length are compared
// item by item, others as a whole.
func changes(out []Change, path string, a, b any) []Change {
	if reflect.DeepEqual(a, b) {
		return out
	}
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok && bok {
		keys := slices.Sorted(maps.Keys(am))
		for k := range bm {
			if _, ok := am[k]; !ok {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range slices.Compact(keys) {
			p := joinPath(path, k)
			if p == "metadata.resourceVersion" {
				continue
			}
			av, ain := am[k]
			bv, bin := bm[k]
			_, amap := av.(map[string]any)
			_, bmap := bv.(map[string]any)
			switch {
			case !ain && bmap:
				out = changes(out, p, map[string]any{}, bv) // name the added leaves
			case !bin && amap:
				out = changes(out, p, av, map[string]any{})
			case !ain:
				out = append(out, Change{Path: p, Old: "∅", New: compact(bv)})
			case !bin:
				out = append(out, Change{Path: p, Old: compact(av), New: "∅"})
			default:
				out = changes(out, p, av, bv)
			}
		}
		return out
	}
	al, aok := a.([]any)
	bl, bok := b.([]any)
	if aok && bok && len(al) == len(bl) {
		for i := range al {
			out = changes(out, path+"["+strconv.Itoa(i)+"]", al[i], bl[i])
		}
		return out
	}
	return append(out, Change{Path: path, Old: compact(a), New: compact(b)})
}

func joinPath(path, key string) string {
	if strings.ContainsAny(key, ".[] ") {
		key = "[" + strconv.Quote(key) + "]"
		return path + key
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

// compact renders a value short enough for a one-line summary.
func compact(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		if r := []rune(x); len(r) > 40 {
			x = string(r[:37]) + "..."
		}
		if x == "" || strings.ContainsAny(x, ",→") {
			return strconv.Quote(x)
		}
		return x
	case map[string]any:
		return fmt.Sprintf("{%d fields}", len(x))
	case []any:
		return fmt.Sprintf("[%d items]", len(x))
	}
	return fmt.Sprint(v)
}

// DiffLineKind is what one line of a unified diff is, for whoever colours
// it: the terminal UI and the CLI colour the same lines the same way.
type DiffLineKind int

const (
	DiffContext DiffLineKind = iota // an unchanged line, or anything else
	DiffHeader                      // "--- a" and "+++ b"
	DiffAdded                       // "+..."
	DiffRemoved                     // "-..."
	DiffHunk                        // "@@ -1,3 +1,4 @@"
)

// KindOfDiffLine classifies one line of a unified diff.
func KindOfDiffLine(line string) DiffLineKind {
	switch {
	case strings.HasPrefix(line, "+++"), strings.HasPrefix(line, "---"):
		return DiffHeader
	case strings.HasPrefix(line, "+"):
		return DiffAdded
	case strings.HasPrefix(line, "-"):
		return DiffRemoved
	case strings.HasPrefix(line, "@@"):
		return DiffHunk
	}
	return DiffContext
}
