package decode

import (
	"os"
	"path/filepath"
	"testing"
)

// kube17 holds values written by a real Kubernetes 1.7 API server, in the
// shared/ folder CI lays beside the repository.
const kube17 = "../../shared/testdata/kube-1.7"

func readShared(tb testing.TB, name string) []byte {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join(kube17, name))
	if err != nil {
		tb.Fatalf("real values are missing (shared/ must sit beside the repository): %v", err)
	}
	return b
}
