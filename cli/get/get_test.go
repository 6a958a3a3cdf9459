package get

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/etcdscope/etcdscope/cli/cmdutil"
	"github.com/etcdscope/etcdscope/cli/internal/clitest"
	"github.com/etcdscope/etcdscope/decode"
	"github.com/etcdscope/etcdscope/etcdview"
)

// TestGetOnATerminalIsInert prints values whose text holds OSC, CSI, C1 and
// bidi controls, in every form get has: a terminal gets them escaped
// (-o raw excepted: it asks for the bytes as stored), a pipe as they are.
func TestGetOnATerminalIsInert(t *testing.T) {
	cm := clitest.TerminalAttackValue(t)
	text := []byte("not JSON \x1b]52;c;b3duZWQ=\x07\x1b[2J")
	key := "/registry/configmaps/default/motd"
	tty := func(output string) (cmdutil.Printer, *bytes.Buffer, *bytes.Buffer) {
		var out, errOut bytes.Buffer
		return cmdutil.Printer{Out: &out, ErrOut: &errOut, P: cmdutil.Palette{TTY: true}, EP: cmdutil.Palette{TTY: true}, Output: output}, &out, &errOut
	}
	controls := "\x1b\x07\u009b\u202e"
	for _, tc := range []struct {
		value  []byte
		output string
	}{{cm, ""}, {cm, decode.OutputJSON}, {text, ""}} {
		s, out, errOut := tty(tc.output)
		if err := printValue(s, key, &etcdview.KV{Key: key, Value: tc.value, ModRevision: 3}, decode.Decoder{}); err != nil {
			t.Fatal(err)
		}
		if got := out.String() + errOut.String(); strings.ContainsAny(got, controls) || out.Len() == 0 {
			t.Errorf("get -o %q: the terminal gets %q", tc.output, got)
		}
	}
	s, out, _ := tty(cmdutil.OutputRaw)
	if err := printValue(s, key, &etcdview.KV{Key: key, Value: text}, decode.Decoder{}); err != nil || !bytes.Equal(out.Bytes(), text) {
		t.Errorf("-o raw on a terminal: %v, %q, want the bytes as stored", err, out.String())
	}
	for _, format := range []listFormat{jsonList, yamlList} {
		s, out, _ := tty("")
		w := s.P.Writer(s.Out)
		kvs := []etcdview.KV{{Key: key, Value: cm, ModRevision: 3}}
		if err := writeList(context.Background(), w, decode.Decoder{JSONOnly: true}, pagesOf(kvs, 1, nil), format, nil); err != nil {
			t.Fatal(err)
		}
		w.Flush()
		if strings.ContainsAny(out.String(), controls) || !strings.Contains(out.String(), `\u202e`) {
			t.Errorf("the List on a terminal: %q", out.String())
		}
	}
	s, out, _ = tty("")
	keys := []etcdview.KV{{Key: "/registry/pods/n\x1b[2Js/p\u202eod", ModRevision: 4, CreateRevision: 4, Version: 1}}
	if err := printObjectTable(s, decode.Resource{Resource: "pods", Namespaced: true}, keys); err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(out.String(), controls) || !strings.Contains(out.String(), `n\x1b[2Js`) {
		t.Errorf("the table on a terminal: %q", out.String())
	}
}
