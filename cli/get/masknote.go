package get

import (
	"fmt"
	"io"

	"github.com/etcdscope/etcdscope/cli/cmdutil"
	"github.com/etcdscope/etcdscope/decode"
	"github.com/etcdscope/etcdscope/decode/table"
)

// maskNote is the line a template or custom-columns that printed a masked
// value adds on stderr, once: the output is what was asked, masked, so the
// exit status stays 0, and a script that wants the values sees why and how.
const maskNote = "etcdscope: Secret values are masked (<N bytes>); add --show-secrets to print them"

// maskWatch passes what a -o that prints fields writes, and sees whether
// a masked value was among it.
type maskWatch struct {
	w    io.Writer
	tail []byte // the end of the last write: a mask may span two
	seen bool
}

// watchMasks wraps pr's output in a maskWatch when it prints the fields of
// Secrets with their values masked (jsonpath, go-template, custom-columns);
// nil otherwise.
func watchMasks(pr *cmdutil.Printer, res *table.Resource, f getFlags) *maskWatch {
	if f.dec.ShowSecrets || res.Served.Group != "" || res.Served.Kind != "Secret" ||
		f.out.format != formatTemplate && f.out.format != formatColumns {
		return nil
	}
	m := &maskWatch{w: pr.Out}
	pr.Out = m
	return m
}

func (m *maskWatch) Write(p []byte) (int, error) {
	if !m.seen {
		n := min(len(p), decode.MaxMaskLen)
		m.seen = decode.ContainsMask(append(m.tail, p[:n]...)) || decode.ContainsMask(p)
		m.tail = append(m.tail, p[len(p)-n:]...)
		m.tail = m.tail[max(0, len(m.tail)-decode.MaxMaskLen):]
	}
	return m.w.Write(p)
}

// report says on stderr that masked values were printed, if they were.
func (m *maskWatch) report(pr cmdutil.Printer) {
	if m != nil && m.seen {
		fmt.Fprintln(pr.ErrOut, maskNote)
	}
}
