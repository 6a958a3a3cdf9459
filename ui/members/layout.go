package members

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"strings"

	"github.com/etcdscope/etcdscope/decode"
	"github.com/etcdscope/etcdscope/etcdview/check"
	"github.com/etcdscope/etcdscope/ui/common"
)

// group is the members that hold one same value (nil: absent).
type group struct {
	members []string
	kv      *check.MemberValue
}

// groups sorts the members that answered by the value they hold, the
// largest group first (the majority; on a tie, the first member's).
func groups(vals []check.MemberValue) []group {
	var gs []group
	for i, v := range vals {
		if v.Err != nil {
			continue
		}
		found := false
		for j := range gs {
			if sameValue(gs[j].kv, &vals[i]) {
				gs[j].members = append(gs[j].members, v.Member)
				found = true
				break
			}
		}
		if !found {
			gs = append(gs, group{members: []string{v.Member}, kv: &vals[i]})
		}
	}
	for i := 1; i < len(gs); i++ {
		for j := i; j > 0 && len(gs[j].members) > len(gs[j-1].members); j-- {
			gs[j], gs[j-1] = gs[j-1], gs[j]
		}
	}
	return gs
}

func sameValue(a, b *check.MemberValue) bool {
	switch {
	case a.KV == nil || b.KV == nil:
		return a.KV == nil && b.KV == nil
	}
	return a.KV.ModRevision == b.KV.ModRevision && a.KV.Version == b.KV.Version && bytes.Equal(a.KV.Value, b.KV.Value)
}

// layout is the view's rows: a row per member, then each minority's value
// as a diff against the majority's, then the majority's value.
func layout(s *common.Styles, d decode.Decoder, key string, vals []check.MemberValue) []common.Line {
	heading := func(t string) common.Line { return common.StyledLine(s.Title, t) }
	var out []common.Line
	for _, v := range vals {
		out = append(out, common.NewLine(fmt.Sprintf("%-12s %s", common.Text(v.Member), memberState(v))))
	}
	gs := groups(vals)
	if len(gs) == 0 {
		return out
	}
	major := gs[0]
	object := func(g group) decode.Object { return d.DecodeAt(key, g.kv.KV.Value, g.kv.KV.ModRevision) }
	for _, g := range gs[1:] {
		out = append(out, common.Line{}, heading(fmt.Sprintf("%s against %s", strings.Join(g.members, ", "), strings.Join(major.members, ", "))))
		switch {
		case g.kv.KV == nil:
			out = append(out, common.PlainLines("(absent here)")...)
		case major.kv.KV == nil:
			out = append(out, common.PlainLines("(absent on the others)")...)
			out = append(out, s.YAMLLines(object(g).Text())...)
		default:
			diff := decode.Diff(object(major), object(g))
			if diff.Unified == "" {
				out = append(out, common.PlainLines(fmt.Sprintf("(decoded the same; the stored bytes differ: %d here, %d there)", len(g.kv.KV.Value), len(major.kv.KV.Value)))...)
				continue
			}
			out = append(out, s.DiffLines(diff.Unified)...)
		}
	}
	if major.kv.KV != nil {
		title := "the value of " + strings.Join(major.members, ", ")
		if len(gs) == 1 {
			title = "the value, the same on every member that answered"
		}
		out = append(out, common.Line{}, heading(title))
		out = append(out, s.YAMLLines(object(major).Text())...)
	}
	return out
}

// memberState is one member's row: its version of the key, or why there
// is none.
func memberState(v check.MemberValue) string {
	switch {
	case v.Err != nil:
		return "unreadable: " + v.Err.Error()
	case v.KV == nil:
		return "absent"
	}
	// The first digits of the value's SHA-256, as the check's table shows it.
	sum := sha256.Sum256(v.KV.Value)
	return fmt.Sprintf("mod %d ver %d %x %d bytes", v.KV.ModRevision, v.KV.Version, sum[:4], len(v.KV.Value))
}
