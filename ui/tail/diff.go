package tail

import (
	"errors"
	"fmt"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/etcdscope/etcdscope/decode"
	"github.com/etcdscope/etcdscope/etcdview"
	"github.com/etcdscope/etcdscope/ui/common"
)

// change is what a summary or a diff of one row needs: the row's key and
// revisions, and the values the recent cache already had.
type change struct {
	seq          uint64
	typ          etcdview.EventType
	key          string
	rev          int64
	newV, oldV   []byte
	haveNew      bool
	haveOld      bool
	prevRevKnown int64
}

func (m *Model) changeOf(seq uint64) change {
	r := m.ring.At(seq)
	ch := change{seq: seq, typ: r.Type, key: r.Key, rev: r.Rev, prevRevKnown: r.PrevRev}
	ch.newV, ch.haveNew = m.values.get(r.Key, r.Rev)
	if r.PrevRev > 0 {
		ch.oldV, ch.haveOld = m.values.get(r.Key, r.PrevRev)
	}
	return ch
}

// objects decodes the values before and after the change, reading from etcd
// what the cache no longer held: the new value at its revision, the old one
// as of the revision before.
func (ch change) objects(c common.Common) (before, after decode.Object, err error) {
	if ch.typ != etcdview.Deleted && !ch.haveNew {
		if ch.newV, err = ch.read(c, ch.rev); err != nil {
			return
		}
	}
	if ch.typ != etcdview.Added && !ch.haveOld {
		if ch.oldV, err = ch.read(c, ch.rev-1); err != nil {
			return
		}
	}
	d := c.Decoder
	if ch.newV != nil {
		after = d.DecodeAt(ch.key, ch.newV, ch.rev)
	}
	if ch.oldV != nil {
		before = d.DecodeAt(ch.key, ch.oldV, ch.prevRevKnown)
	}
	return before, after, nil
}

// read is the change's key's value as of rev, nil when there was none.
func (ch change) read(c common.Common, rev int64) ([]byte, error) {
	ctx, cancel := c.Context()
	defer cancel()
	kv, err := c.Src.Get(ctx, ch.key, rev)
	if errors.Is(err, etcdview.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("get %s at revision %d: %w", ch.key, rev, err)
	}
	return kv.Value, nil
}

// SummariesMsg carries the changed field paths of rows, by sequence number.
type SummariesMsg struct{ sums map[uint64]string }

func summarise(c common.Common, changes []change) tea.Cmd {
	return func() tea.Msg {
		out := make(map[uint64]string, len(changes))
		for _, ch := range changes {
			before, after, err := ch.objects(c)
			switch {
			case errors.Is(err, etcdview.ErrCompacted):
				out[ch.seq] = "(compacted)"
			case err != nil:
				out[ch.seq] = "(" + err.Error() + ")"
			default:
				out[ch.seq] = etcdview.Summary(ch.typ, &before, after)
			}
		}
		return SummariesMsg{out}
	}
}

// DiffMsg carries the diff of one row, laid out.
type DiffMsg struct {
	seq   uint64
	title string
	lines []common.Line
	err   error
}

func diffCmd(c common.Common, ch change) tea.Cmd {
	return func() tea.Msg {
		before, after, err := ch.objects(c)
		msg := DiffMsg{seq: ch.seq, title: fmt.Sprintf("%s %s at revision %d", ch.typ, decode.EscapeKey(ch.key), ch.rev)}
		if err != nil {
			msg.err = err
			return msg
		}
		switch ch.typ {
		case etcdview.Added:
			msg.lines = c.Styles.YAMLLines(after.Text())
		case etcdview.Deleted:
			msg.lines = append(common.PlainLines("# the value before the deletion"), c.Styles.YAMLLines(before.Text())...)
		default:
			d := decode.Diff(before, after)
			text := d.Unified
			if text == "" {
				text = "# no change in the decoded object (a write of the same value)"
			}
			msg.lines = c.Styles.DiffLines(text)
		}
		return msg
	}
}
