package get

import (
	"fmt"
	"strings"
	"testing"

	"github.com/etcdscope/etcdscope/cli/cmdutil"
	"github.com/etcdscope/etcdscope/ui/uitest"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestTablesCapAHostileCell lists 1000 ConfigMaps and one whose name is
// 30 KB: each table's rows stay short (the long cell cut with "…"), not
// padded to 30 KB each, while -o name prints the name whole.
func TestTablesCapAHostileCell(t *testing.T) {
	src := uitest.New()
	long := strings.Repeat("a", 30<<10)
	src.PutObject(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "x", Name: long}})
	for i := range 1000 {
		src.PutObject(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "x", Name: fmt.Sprintf("cm-%d", i)}})
	}
	const lineMax = cmdutil.MaxCellRunes*len("…") + 200 // the capped cell and the other columns
	for _, flags := range [][]string{{"-n", "x", "--keys"}, {"-A", "--keys"}, {"-n", "x"}, {"-A", "-o", "wide"}} {
		for _, tty := range []bool{false, true} {
			out, _, err := getOn(t, src, tty, []string{"configmaps"}, flags...)
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
			if len(lines) != 1002 || len(out) > 1002*lineMax/2 {
				t.Errorf("%s: %d lines, %d bytes", flags, len(lines), len(out))
			}
			capped := 0
			for _, l := range lines {
				if len(l) > lineMax {
					t.Errorf("%s: a line of %d bytes", flags, len(l))
					break
				}
				if strings.Contains(l, strings.Repeat("a", cmdutil.MaxCellRunes-1)+"…") {
					capped++
				}
			}
			if capped != 1 {
				t.Errorf("%s: %d rows hold the name cut to %d runes, want 1", flags, capped, cmdutil.MaxCellRunes)
			}
		}
	}
	out, _, err := getOn(t, src, false, []string{"configmaps"}, "-n", "x", "-o", "name")
	if err != nil || !strings.Contains(out, "configmap/"+long+"\n") {
		t.Errorf("-o name does not print the name whole: %v", err)
	}
}
