package demo

import (
	"strings"
	"testing"
)

func TestImageIDNamesTheRepositoryAsContainerdDoes(t *testing.T) {
	digest := "sha256:" + strings.Repeat("ab", 32)
	tests := []struct {
		image, wantRepo string
	}{
		{"nginx:1.27", "docker.io/library/nginx@"},
		{"busybox", "docker.io/library/busybox@"},
		{"bitnami/redis:7.2", "docker.io/bitnami/redis@"},
		{"quay.io/jupyter/base-notebook:2024-12-02", "quay.io/jupyter/base-notebook@"},
		{"registry.k8s.io/coredns/coredns:v1.11.3", "registry.k8s.io/coredns/coredns@"},
		{"localhost:5000/team/app:v2", "localhost:5000/team/app@"},
	}
	for _, tc := range tests {
		id := imageID(tc.image)
		hex, ok := strings.CutPrefix(id, tc.wantRepo+"sha256:")
		if !ok || len(hex) != 64 {
			t.Errorf("imageID(%q) = %q, want %ssha256:<64 hex digits>", tc.image, id, tc.wantRepo)
		}
	}
	if id := imageID("quay.io/jupyter/base-notebook@" + digest); id != "quay.io/jupyter/base-notebook@"+digest {
		t.Errorf("an image pinned by digest has imageID %q, want that digest", id)
	}
	if imageID("nginx:1.27") == imageID("nginx:1.28") {
		t.Error("two tags of an image have one imageID")
	}
}
