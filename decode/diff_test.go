package decode

import (
	"fmt"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func deployment(replicas, ready int32) *appsv1.Deployment {
	return &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", Generation: 1},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx:1.27"}}},
			},
		},
		Status: appsv1.DeploymentStatus{Replicas: ready, ReadyReplicas: ready},
	}
}

func TestDiffSummarisesChangedFields(t *testing.T) {
	const key = "/registry/deployments/default/web"
	before := deployment(3, 3)
	after := deployment(5, 4)
	after.Spec.Template.Spec.Containers[0].Image = "nginx:1.28"
	after.Labels = map[string]string{"tier": "front"}
	tests := []struct {
		name          string
		old, new      Object
		summary       string
		unifiedHas    []string
		unifiedAbsent []string
	}{
		{"scaled and rolled",
			Decoder{}.DecodeAt(key, stored(t, before), 10), Decoder{}.DecodeAt(key, stored(t, after), 11),
			"metadata.labels.tier ∅→front, spec.replicas 3→5, spec.template.spec.containers[0].image nginx:1.27→nginx:1.28, status.readyReplicas 3→4, status.replicas 3→4",
			[]string{"--- " + key + "@10\n", "+++ " + key + "@11\n", "-  replicas: 3\n", "+  replicas: 5\n"}, []string{"resourceVersion"}},
		{"only the revision moved",
			Decoder{}.DecodeAt(key, stored(t, before), 10), Decoder{}.DecodeAt(key, stored(t, before), 12),
			"only metadata.resourceVersion changed", nil, []string{"resourceVersion", "@@"}},
		{"same value", Decode(key, stored(t, before)), Decode(key, stored(t, before)), "no change", nil, []string{"@@"}},
		{"secret change stays masked",
			Decode(secretKey, stored(t, testSecret())), Decode(secretKey, stored(t, func() *corev1.Secret {
				s := testSecret()
				s.Data["password"] = []byte("correct horse")
				return s
			}())),
			"data.password <7 bytes>→<13 bytes>", []string{"+  password: <13 bytes>\n"}, []string{"Y29ycmVjdCBob3JzZQ"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Diff(tt.old, tt.new)
			if got := d.Summary(); got != tt.summary {
				t.Errorf("Summary =\n %s\nwant\n %s", got, tt.summary)
			}
			for _, w := range tt.unifiedHas {
				if !strings.Contains(d.Unified, w) {
					t.Errorf("unified diff lacks %q:\n%s", w, d.Unified)
				}
			}
			for _, a := range tt.unifiedAbsent {
				if strings.Contains(d.Unified, a) {
					t.Errorf("unified diff has %q:\n%s", a, d.Unified)
				}
			}
		})
	}
}

// TestDiffHunksNameTheirLines checks every hunk of a diff against the two
// renderings: its context and removed lines are the old side's from the
// start its header gives, its context and added lines the new side's. The
// first hunk joins two changes a few lines apart (generation, uid), the
// second is far below (the image): go-udiff before v0.4.2 gave the second
// hunk a new-side start short by the lines between the joined changes.
func TestDiffHunksNameTheirLines(t *testing.T) {
	const key = "/registry/deployments/default/web"
	before := deployment(3, 3)
	after := deployment(3, 3)
	after.Generation = 2
	after.UID = "e8fd977e-4243-4649-8dcb-396b13f20c2d"
	after.Spec.Template.Spec.Containers[0].Image = "nginx:1.28"
	from, to := Decoder{}.DecodeAt(key, stored(t, before), 10), Decoder{}.DecodeAt(key, stored(t, after), 11)
	d := Diff(from, to)
	hunks := checkHunks(t, d.Unified, withoutResourceVersion(from), withoutResourceVersion(to))
	if hunks != 2 {
		t.Errorf("%d hunks, want 2 (the metadata's changes joined, the image's):\n%s", hunks, d.Unified)
	}
}

// checkHunks reads a unified diff's hunks and checks each against the
// texts it was made from; it returns how many it read.
func checkHunks(t *testing.T, unified, oldText, newText string) int {
	t.Helper()
	oldLines, newLines := strings.Split(oldText, "\n"), strings.Split(newText, "\n")
	hunks := 0
	var o, n int // the next line of each side the current hunk names, 0-based
	for line := range strings.Lines(unified) {
		line = strings.TrimSuffix(line, "\n")
		switch {
		case strings.HasPrefix(line, "--- "), strings.HasPrefix(line, "+++ "):
		case strings.HasPrefix(line, "@@ "):
			var oldStart, oldLen, newStart, newLen int
			if _, err := fmt.Sscanf(line, "@@ -%d,%d +%d,%d @@", &oldStart, &oldLen, &newStart, &newLen); err != nil {
				t.Fatalf("hunk header %q: %v", line, err)
			}
			hunks++
			o, n = oldStart-1, newStart-1
		case hunks == 0:
			t.Fatalf("line before the first hunk: %q", line)
		default:
			body := line[1:]
			if line[0] != '+' && (o >= len(oldLines) || oldLines[o] != body) {
				t.Errorf("hunk %d: old line %d is not %q:\n%s", hunks, o+1, body, unified)
				return hunks
			}
			if line[0] != '-' && (n >= len(newLines) || newLines[n] != body) {
				t.Errorf("hunk %d: new line %d is not %q:\n%s", hunks, n+1, body, unified)
				return hunks
			}
			if line[0] != '+' {
				o++
			}
			if line[0] != '-' {
				n++
			}
		}
	}
	return hunks
}
