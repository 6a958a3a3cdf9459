package etcdview

import (
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/etcdscope/etcdscope/embedded/etcdtest"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// noSidecar keeps the index of a test's file in memory: nothing is written
// beside the damaged copies or in the cache.
var noSidecar = FileOptions{NoIndexFile: true}.sidecar(sidecarOptions{})

// snapshotFile writes a data file of the bundled etcd: keys of values from
// a few bytes to several pages (overflow pages), rewritten and deleted, so
// that the file holds branch, leaf and overflow pages.
func snapshotFile(t *testing.T) string {
	t.Helper()
	_, cli := etcdtest.StartBundled(t, 1)
	writeConfigMaps(t, cli, 300, 2500)
	r, err := cli.Snapshot(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	path := filepath.Join(t.TempDir(), "db")
	out, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	if _, err := io.Copy(out, r); err != nil {
		t.Fatal(err)
	}
	return path
}

// writeConfigMaps writes n configmaps of values up to most bytes, from a
// few bytes to several pages, rewrites every 7th and deletes every 11th.
func writeConfigMaps(t *testing.T, cli *clientv3.Client, n, most int) {
	t.Helper()
	for i := range n {
		key := fmt.Sprintf("/registry/configmaps/ns-%d/cm-%03d", i%4, i)
		put(t, cli, key, strings.Repeat("v", 10+i*i%most))
		if i%7 == 0 {
			put(t, cli, key, "rewritten")
		}
		if i%11 == 0 {
			// kine refuses DeleteRange: kube-apiserver's transaction.
			if err := etcdtest.Delete(testCtx(t), cli, key); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// readAll is what ls, get, history and du read of a file, as text to
// compare, or the first error.
func readAll(t *testing.T, path string) (string, error) {
	f, err := openFile(path, noSidecar)
	if err != nil {
		return "", err
	}
	defer f.Close()
	return readSource(t, f)
}

// readSource is what ls, get, history and du read of an offline source.
func readSource(t *testing.T, f Offline) (string, error) {
	var b strings.Builder
	children, err := f.Children(testCtx(t), "/registry/configmaps/", 0)
	if err != nil {
		return "", err
	}
	fmt.Fprintln(&b, children)
	for _, c := range children.Children {
		p, err := f.List(testCtx(t), "/registry/configmaps/"+c.Name, 0, PageToken{Values: true})
		if err != nil {
			return "", err
		}
		for _, kv := range p.Keys {
			h, err := f.History(testCtx(t), kv.Key, HistoryOptions{})
			if err != nil {
				return "", err
			}
			fmt.Fprintln(&b, kv.Key, len(kv.Value), kv.ModRevision, len(h.Entries))
		}
	}
	res, err := f.Scan(testCtx(t), "/registry/", ScanOptions{}, func([]ScanRecord) error { return nil })
	if err != nil {
		return "", err
	}
	fmt.Fprintln(&b, res.Layout.Size, res.Layout.Buckets)
	return b.String(), nil
}

// TestADamagedOrCutFileIsAnErrorNeverACrash cuts a real data file at every
// page boundary and between, and flips bytes in its middle pages: each
// copy opens with an error, or reads as the whole file does (a cut after
// the last page in use), or, damaged, reads or fails; none crashes.
func TestADamagedOrCutFileIsAnErrorNeverACrash(t *testing.T) {
	whole := snapshotFile(t)
	data, err := os.ReadFile(whole)
	if err != nil {
		t.Fatal(err)
	}
	want, err := readAll(t, whole)
	if err != nil {
		t.Fatal(err)
	}
	m, err := readMeta(strings.NewReader(string(data)), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	page := int(m.pageSize)
	t.Logf("%d bytes, %d pages in use of %d", len(data), m.pgid, len(data)/page)
	dir := t.TempDir()
	for cut := 0; cut < len(data); cut += page / 2 {
		for _, n := range []int{cut, cut + 1, cut + 1200} {
			path := filepath.Join(dir, fmt.Sprintf("cut-%d", n))
			if err := os.WriteFile(path, data[:min(n, len(data))], 0o600); err != nil {
				t.Fatal(err)
			}
			got, err := readAll(t, path)
			switch {
			case int64(n) < m.highWater() && err == nil:
				t.Errorf("a copy cut at %d of %d bytes read without an error", n, len(data))
			case int64(n) >= m.highWater() && (err != nil || got != want):
				t.Errorf("a copy cut at %d, after the last page in use (%d), reads %v: want the whole file's", n, m.highWater(), err)
			case n == 0 && !strings.Contains(err.Error(), "is empty"),
				n > 0 && n < minBoltSize && !strings.Contains(err.Error(), "too short for a bbolt file"),
				n > 2*page && int64(n) < m.highWater() && !strings.Contains(err.Error(), "is cut short: the file is "+fmt.Sprint(n)+" bytes, its header says "+fmt.Sprint(m.highWater())):
				t.Errorf("a copy cut at %d: %v, want it said what is wrong", n, err)
			}
		}
	}
	rnd := rand.New(rand.NewPCG(22, 7))
	caught := 0
	for i := range 150 {
		damaged := slices.Clone(data)
		for range 1 + i%8 {
			// The middle pages: past the meta pages, before the end.
			damaged[2*page+rnd.IntN(int(m.highWater())-2*page)] ^= byte(1 + rnd.IntN(255))
		}
		path := filepath.Join(dir, fmt.Sprintf("damaged-%d", i))
		if err := os.WriteFile(path, damaged, 0o600); err != nil {
			t.Fatal(err)
		}
		// A flipped byte in a value reads as another value: bbolt keeps no
		// checksums of pages. What matters is that the read returns, and
		// that a page bbolt asserts on is said to be damaged.
		if _, err := readAll(t, path); err != nil && strings.HasPrefix(err.Error(), "data file "+path+" is damaged: ") {
			caught++
		}
		os.Remove(path)
	}
	if caught == 0 {
		t.Error("no damaged copy failed as damaged: the damage never reached bbolt's assertions")
	}
	t.Logf("%d of 150 damaged copies failed as damaged", caught)
}

// TestWhatIsNotADataFileIsNamed: a directory, /dev/null, a FIFO (never
// opened: that would block until a writer came) and a socket each get one
// line saying what they are.
func TestWhatIsNotADataFileIsNamed(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	garbage := filepath.Join(dir, "garbage")
	if err := os.WriteFile(garbage, []byte(strings.Repeat("not bbolt ", 1000)), 0o600); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		dir:         "--db " + dir + " is a directory, not an etcd data file (member/snap/db or a snapshot)",
		"/dev/null": "--db /dev/null is a character device, not an etcd data file (member/snap/db or a snapshot)",
		fifo:        "--db " + fifo + " is a FIFO (named pipe), not an etcd data file (member/snap/db or a snapshot)",
		sock:        "--db " + sock + " is a socket, not an etcd data file (member/snap/db or a snapshot)",
		garbage:     "--db " + garbage + ": no bbolt header: not an etcd data file (member/snap/db or a snapshot)",
	} {
		if _, err := OpenFile(path); err == nil || err.Error() != want {
			t.Errorf("OpenFile(%s): %v, want %q", path, err, want)
		}
	}
}
