package etcdview

import (
	"os"
	"testing"
)

// BenchmarkKineKeyIndex opens the kine file (or recording)
// ETCDSCOPE_BENCH_KINE_DB names and builds its key index, as history and
// ls --rev do, for profiles without the process around it. It skips when
// the variable is unset: the file is outside the repository, and only
// read.
func BenchmarkKineKeyIndex(b *testing.B) {
	path := os.Getenv("ETCDSCOPE_BENCH_KINE_DB")
	if path == "" {
		b.Skip("ETCDSCOPE_BENCH_KINE_DB names no kine file")
	}
	for b.Loop() {
		f, err := OpenKineFile(path)
		if err != nil {
			b.Fatal(err)
		}
		x, err := f.keys(b.Context())
		if err != nil || x.len() == 0 {
			b.Fatalf("%d keys, %v", x.len(), err)
		}
		f.Close()
	}
}
