package uitest

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/etcdscope/etcdscope/etcdview"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Hostile holds everything a terminal acts on instead of printing: whole
// sequences that set the window title (OSC 0), write the clipboard (OSC 52),
// clear the screen (CSI 2J) and start a device control string; every C0
// control, DEL, every C1 control (U+0080–U+009F, which a UTF-8 terminal may
// read as CSI and the like), the bidi controls and the line and paragraph
// separators, and every byte that is not UTF-8 on its own. Whoever may write
// a ConfigMap can store it; kube-apiserver keeps any string.
var Hostile = hostile()

func hostile() string {
	var b strings.Builder
	b.WriteString("\x1b]0;pwned\x07\x1b]52;c;cHduZWQ=\x07\x1b[2J\x1b[H\x1bP1$r\x1b\\")
	for c := range 0x20 {
		b.WriteByte(byte(c))
	}
	b.WriteByte(0x7f)
	for r := rune(0x80); r <= 0x9f; r++ {
		b.WriteRune(r)
	}
	for _, r := range []rune{0x061c, 0x200e, 0x200f, 0x2028, 0x2029, 0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069} {
		b.WriteRune(r)
	}
	for c := 0x80; c <= 0xff; c++ {
		b.WriteString("x")
		b.WriteByte(byte(c))
	}
	return b.String()
}

// HostileKey is a key whose namespace and name segments set the title and
// clear the screen, as a direct write to etcd can make one.
const HostileKey = "/registry/configmaps/evil\x1b[2J/x\x1b]0;pwned\x07"

// MotdKey is the ConfigMap HostileFixture changes: Hostile in its data, in
// a data key and in an annotation.
const MotdKey = "/registry/configmaps/default/motd"

// Motd is the ConfigMap at MotdKey with Hostile after greeting.
func Motd(greeting string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "motd", CreationTimestamp: created,
			Annotations: map[string]string{"note": Hostile}},
		Data: map[string]string{"motd": greeting + Hostile, "key" + Hostile: "v"},
	}
}

// HostileFixture is Fixture with Hostile wherever data from etcd shows: a
// ConfigMap written twice, a key of hostile segments whose value is
// Hostile, and members whose names, endpoints, alarms and errors hold it.
func HostileFixture() *Source {
	s := Fixture()
	s.PutObject(Motd("hello "))
	s.Put(HostileKey, []byte(Hostile))
	s.status.Description = "fixture " + Hostile
	s.SetStatus([]etcdview.Member{
		{ID: 1, Name: "etcd-0" + Hostile, Endpoint: "http://127.0.0.1:2379/" + Hostile, Leader: true, Alarms: []string{Hostile}},
		{ID: 2, Name: "etcd-1", Endpoint: "http://127.0.0.1:2389", Err: errors.New("dial: " + Hostile)},
	})
	return s
}

// Active lists what in s a terminal would act on instead of print: a
// control byte other than newline, DEL, a C1 control, a bidi control, a
// line or paragraph separator, a byte that is not UTF-8.
func Active(s string) []string {
	var out []string
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		bad := ""
		switch {
		case r == utf8.RuneError && n == 1:
			bad = fmt.Sprintf("byte %#x, not UTF-8", s[i])
		case r < 0x20 && r != '\n', r == 0x7f, r >= 0x80 && r <= 0x9f:
			bad = fmt.Sprintf("control %U", r)
		case unicode.Is(unicode.Bidi_Control, r), unicode.In(r, unicode.Zl, unicode.Zp):
			bad = fmt.Sprintf("bidi control or separator %U", r)
		}
		if bad != "" {
			out = append(out, fmt.Sprintf("%s on line %d", bad, strings.Count(s[:i], "\n")+1))
		}
		i += n
	}
	return out
}
