package decode

import (
	"os"
	"path/filepath"
	"testing"
)

// kube17 holds values written by a real Kubernetes 1.7 API server
// (testdata/kube-1.7/README.md says where they come from).
const kube17 = "../testdata/kube-1.7"

func readKube17(tb testing.TB, name string) []byte {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join(kube17, name))
	if err != nil {
		tb.Fatalf("real values are missing from testdata/kube-1.7: %v", err)
	}
	return b
}
