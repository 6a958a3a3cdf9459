package decode

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestKubernetesVersionIsTheReleaseGoModPins fails when go.mod moves
// k8s.io/kubernetes or the API types (k8s.io/api, pinned by a replace) to
// another release and the constant stays behind.
func TestKubernetesVersionIsTheReleaseGoModPins(t *testing.T) {
	gomod, err := os.ReadFile("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	kube := regexp.MustCompile(`(?m)^\s*k8s\.io/kubernetes (v\S+)`).FindSubmatch(gomod)
	api := regexp.MustCompile(`(?m)^\s*k8s\.io/api => k8s\.io/api (v\S+)`).FindSubmatch(gomod)
	if kube == nil || api == nil {
		t.Fatalf("go.mod names no k8s.io/kubernetes version or no k8s.io/api replace")
	}
	if got := string(kube[1]); got != KubernetesVersion {
		t.Errorf("go.mod requires k8s.io/kubernetes %s, KubernetesVersion is %s", got, KubernetesVersion)
	}
	if got := string(api[1]); "v1."+strings.TrimPrefix(got, "v0.") != KubernetesVersion {
		t.Errorf("go.mod pins k8s.io/api %s, not the release of KubernetesVersion %s", got, KubernetesVersion)
	}
}
