package get

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/etcdscope/etcdscope/cli/cmdutil"
	"github.com/etcdscope/etcdscope/decode"
	"github.com/etcdscope/etcdscope/etcdview"
	"github.com/etcdscope/etcdscope/etcdview/etcdviewtest"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestGetShowsInvalidUTF8AsItsBytes: a ConfigMap stored as kube-apiserver
// stores it, whose data and annotation values hold bytes that are not
// UTF-8. get -o yaml on a terminal shows them as \xff\xfe (not U+FFFD,
// which hid them), a pipe gets them as stored, and -o json is valid JSON
// with U+FFFD, as kubectl prints it, on either.
func TestGetShowsInvalidUTF8AsItsBytes(t *testing.T) {
	cm, err := etcdviewtest.Encode(&corev1.ConfigMap{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: "motd", Namespace: "default",
			Annotations: map[string]string{"note": "before\xff\xfeafter"}},
		Data: map[string]string{"motd": "hello \xff\xfe world"},
	})
	if err != nil {
		t.Fatal(err)
	}
	key := "/registry/configmaps/default/motd"
	get := func(tty bool, output string) string {
		t.Helper()
		var out, errOut bytes.Buffer
		s := cmdutil.Printer{Out: &out, ErrOut: &errOut, P: cmdutil.Palette{TTY: tty}, EP: cmdutil.Palette{TTY: tty}, Output: output}
		if err := printValue(s, key, &etcdview.KV{Key: key, Value: cm, ModRevision: 3}, decode.Decoder{}); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	if got := get(true, ""); !strings.Contains(got, `note: before\xff\xfeafter`) || !strings.Contains(got, `motd: hello \xff\xfe world`) || strings.Contains(got, "\uFFFD") {
		t.Errorf("-o yaml on a terminal:\n%s", got)
	}
	if got := get(false, ""); !strings.Contains(got, "motd: hello \xff\xfe world\n") {
		t.Errorf("-o yaml to a pipe, want the bytes as stored:\n%q", got)
	}
	for _, tty := range []bool{false, true} {
		got := get(tty, decode.OutputJSON)
		if !json.Valid([]byte(got)) || !utf8.ValidString(got) || !strings.Contains(got, `"motd": "hello \ufffd\ufffd world"`) {
			t.Errorf("-o json (terminal %v), want valid JSON with U+FFFD:\n%s", tty, got)
		}
	}
}
