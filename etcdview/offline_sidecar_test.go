package etcdview

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"go.etcd.io/etcd/server/v3/lease"
	"go.etcd.io/etcd/server/v3/storage/backend"
	"go.etcd.io/etcd/server/v3/storage/mvcc"
	"go.uber.org/zap"
)

// openKeys opens path with o and lists every key at the head.
func openKeys(t *testing.T, path string, o sidecarOptions) []string {
	t.Helper()
	f, err := openFile(path, o)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return allKeys(t, f, 0)
}

// putKey adds key to the data file at path, as its etcd member would.
func putKey(t *testing.T, path, key string) {
	t.Helper()
	b := backend.NewDefaultBackend(zap.NewNop(), path)
	s := mvcc.NewStore(zap.NewNop(), b, &lease.FakeLessor{}, mvcc.StoreConfig{})
	s.Put([]byte(key), []byte("v"), 0)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
}

func stat(t *testing.T, path string) os.FileInfo {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi
}

func sum(t *testing.T, path string) [sha256.Size]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

func TestSidecarIsReusedWhileTheFileIsUnchanged(t *testing.T) {
	path := storyFile(t)
	if err := os.Chmod(path, 0o444); err != nil {
		t.Fatal(err)
	}
	before, data := stat(t, path), sum(t, path)
	o := sidecarOptions{cacheDir: t.TempDir()}
	want := openKeys(t, path, o)
	side := stat(t, path+".etcdscope-index")
	if got := openKeys(t, path, o); !slices.Equal(got, want) {
		t.Errorf("keys through the sidecar %q, want %q", got, want)
	}
	// A rebuilt index would have been renamed over the first: another
	// file.
	if !os.SameFile(side, stat(t, path+".etcdscope-index")) {
		t.Error("the second open wrote the sidecar again instead of reading it")
	}
	after := stat(t, path)
	if sum(t, path) != data || !after.ModTime().Equal(before.ModTime()) || after.Mode() != before.Mode() {
		t.Error("opening the file changed it")
	}
	if entries, _ := os.ReadDir(o.cacheDir); len(entries) != 0 {
		t.Errorf("the cache directory holds %v: the sidecar beside the file was writable", entries)
	}
}

func TestSidecarOfAChangedFileIsRebuilt(t *testing.T) {
	path := storyFile(t)
	o := sidecarOptions{cacheDir: t.TempDir()}
	first := openKeys(t, path, o)
	mtime := stat(t, path).ModTime()
	putKey(t, path, "/registry/pods/default/new")
	for name, touch := range map[string]func(){
		"size, time and meta pages changed": func() {},
		// bbolt grows the file in large steps: a commit may leave its
		// size as it was, and the time can be set back.
		"meta pages changed alone": func() {
			if err := os.Chtimes(path, mtime, mtime); err != nil {
				t.Fatal(err)
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			touch()
			got := openKeys(t, path, o)
			if want := append(slices.Clone(first), "/registry/pods/default/new"); !slices.Equal(got, sorted(want)) {
				t.Errorf("keys %q, want %q", got, sorted(want))
			}
			checkSidecarValid(t, path)
		})
	}
}

func sorted(s []string) []string { slices.Sort(s); return s }

// checkSidecarValid says whether the sidecar beside path is a valid index
// of it as it is now.
func checkSidecarValid(t *testing.T, path string) {
	t.Helper()
	id, err := identify(path, stat(t, path))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := readSidecar(path+".etcdscope-index", id); err != nil {
		t.Errorf("the sidecar is not a valid index of the file: %v", err)
	}
}

func TestDamagedSidecarIsRebuilt(t *testing.T) {
	path := storyFile(t)
	o := sidecarOptions{cacheDir: t.TempDir()}
	want := openKeys(t, path, o)
	side := path + ".etcdscope-index"
	good, err := os.ReadFile(side)
	if err != nil {
		t.Fatal(err)
	}
	header := good[:len(sidecarHeader(fileIdentity{}))]
	unsorted := keyIndex{}
	for _, k := range []string{"/b", "/a"} {
		unsorted.entries = append(unsorted.entries, keyEntry{key: unsorted.arena.add([]byte(k)), revEnd: int32(len(unsorted.revs) + 1)})
		unsorted.revs = append(unsorted.revs, revision{main: 2})
	}
	var unsortedFile bytes.Buffer
	if err := encodeIndex(&unsortedFile, header, &unsorted); err != nil {
		t.Fatal(err)
	}
	flipped := slices.Clone(good)
	flipped[len(header)+len(good[len(header):])/2] ^= 0x10
	future := slices.Clone(good)
	future[len(sidecarMagic)-1]++
	for name, damaged := range map[string][]byte{
		"empty":                      {},
		"truncated":                  good[:len(good)/2],
		"a bit flipped":              flipped,
		"another format version":     future,
		"keys out of order, summed":  unsortedFile.Bytes(),
		"trailing bytes":             append(slices.Clone(good), 0),
		"the header of another file": append(slices.Clone(good[:len(header)-1]), good[len(header)-1]^1),
	} {
		t.Run(name, func(t *testing.T) {
			if err := os.WriteFile(side, damaged, 0o600); err != nil {
				t.Fatal(err)
			}
			if got := openKeys(t, path, o); !slices.Equal(got, want) {
				t.Errorf("keys %q, want %q", got, want)
			}
			// The index of an unchanged file encodes to the same bytes:
			// a damaged sidecar kept would differ.
			if rebuilt, err := os.ReadFile(side); err != nil || !bytes.Equal(rebuilt, good) {
				t.Errorf("the sidecar was not rebuilt (%d bytes, %v)", len(rebuilt), err)
			}
		})
	}
}

func TestSidecarIsReplacedWhole(t *testing.T) {
	path := storyFile(t)
	o := sidecarOptions{cacheDir: t.TempDir()}
	openKeys(t, path, o)
	side := path + ".etcdscope-index"
	old, err := os.Open(side)
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	oldBytes, err := os.ReadFile(side)
	if err != nil {
		t.Fatal(err)
	}
	putKey(t, path, "/registry/pods/default/new")
	openKeys(t, path, o)
	// A reader of the old sidecar still reads it whole: the new one was
	// renamed over it, not written into it.
	var b bytes.Buffer
	if _, err := b.ReadFrom(old); err != nil || !bytes.Equal(b.Bytes(), oldBytes) {
		t.Errorf("the old sidecar changed under its reader (%d bytes, was %d): %v", b.Len(), len(oldBytes), err)
	}
	checkSidecarValid(t, path)
	checkNoTemporaries(t, filepath.Dir(path))
}

func checkNoTemporaries(t *testing.T, dir string) {
	t.Helper()
	matches, _ := filepath.Glob(filepath.Join(dir, "*.tmp-*"))
	if len(matches) > 0 {
		t.Errorf("temporary files left: %q", matches)
	}
}

func TestSidecarGoesToTheCacheWhenItCannotGoBesideTheFile(t *testing.T) {
	cases := map[string]func(t *testing.T) string{
		// etcd warns of unknown files in its snap directory.
		"an etcd member's file": func(t *testing.T) string {
			dir := filepath.Join(t.TempDir(), "member", "snap")
			if err := os.MkdirAll(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, "db")
			copyFile(t, storyFile(t), path, 0o600)
			return path
		},
		// As root, a directory without write permission is still
		// writable: a directory where the sidecar would go fails the
		// rename as a read-only directory fails the create.
		"the place beside it taken": func(t *testing.T) string {
			path := storyFile(t)
			if err := os.MkdirAll(filepath.Join(path+".etcdscope-index", "x"), 0o700); err != nil {
				t.Fatal(err)
			}
			return path
		},
	}
	for name, setup := range cases {
		t.Run(name, func(t *testing.T) {
			path := setup(t)
			o := sidecarOptions{cacheDir: t.TempDir()}
			want := openKeys(t, path, o)
			cached, _ := filepath.Glob(filepath.Join(o.cacheDir, "etcdscope", "*-db.index"))
			if len(cached) != 1 {
				t.Fatalf("cache directory holds %q, want one index", cached)
			}
			index := stat(t, cached[0])
			if got := openKeys(t, path, o); !slices.Equal(got, want) || !os.SameFile(index, stat(t, cached[0])) {
				t.Errorf("second open: keys %q (want %q), the cached index reused: %v", got, want, os.SameFile(index, stat(t, cached[0])))
			}
			checkNoTemporaries(t, filepath.Dir(path))
			if name == "an etcd member's file" {
				if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 1 {
					t.Errorf("the member's snap directory holds %v, want db alone", entries)
				}
			}
		})
	}
}

func TestSmallFileGetsNoSidecar(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	copyFile(t, kube17+"boltdb-db", path, 0o444)
	f, err := OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 1 {
		t.Errorf("beside a %d-byte file: %v, want no sidecar", stat(t, path).Size(), entries)
	}
}

// TestNoIndexFileWritesNothing: with FileOptions.NoIndexFile a file that
// would get a sidecar beside it, or in the cache, gets neither.
func TestNoIndexFileWritesNothing(t *testing.T) {
	path := storyFile(t)
	every := sidecarOptions{cacheDir: t.TempDir()} // every file gets a sidecar
	if got, want := openKeys(t, path, FileOptions{NoIndexFile: true}.sidecar(every)), openKeys(t, path, sidecarOptions{minSize: 1 << 62}); !slices.Equal(got, want) {
		t.Errorf("keys %q, want %q", got, want)
	}
	if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 1 {
		t.Errorf("beside the file: %v, want no sidecar", entries)
	}
	if entries, _ := os.ReadDir(every.cacheDir); len(entries) != 0 {
		t.Errorf("in the cache directory: %v, want nothing", entries)
	}
}

// FuzzDecodeIndex feeds the decoder bodies with a valid checksum: it never
// panics, and what it accepts is an index the reads can search.
func FuzzDecodeIndex(f *testing.F) {
	header := sidecarHeader(fileIdentity{size: 1, mtime: time.Unix(0, 0).UnixNano()})
	for _, p := range []string{kube17 + "boltdb-db", storyFile(f)} {
		db, err := openFile(p, sidecarOptions{minSize: 1 << 62})
		if err != nil {
			f.Fatal(err)
		}
		var b bytes.Buffer
		if err := encodeIndex(&b, header, &db.index); err != nil {
			f.Fatal(err)
		}
		db.Close()
		f.Add(b.Bytes()[len(header) : b.Len()-4])
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		sum := crc32.Update(crc32.Checksum(header, crc32c), crc32c, body)
		x, err := decodeIndex(header, binary.LittleEndian.AppendUint32(slices.Clone(body), sum))
		if err != nil {
			return
		}
		for i := range x.len() {
			revs := x.revisions(i)
			if i > 0 && x.key(i-1) >= x.key(i) || len(revs) == 0 {
				t.Fatalf("accepted key %d %q after %q with %d revisions", i, x.key(i), x.key(max(i-1, 0)), len(revs))
			}
			for j := 1; j < len(revs); j++ {
				if revs[j-1].main > revs[j].main || revs[j-1].main == revs[j].main && revs[j-1].sub >= revs[j].sub {
					t.Fatalf("accepted revisions of %q out of order: %+v", x.key(i), revs)
				}
			}
		}
		if x.len() > 0 && int(x.entries[x.len()-1].revEnd) != len(x.revs) {
			t.Fatalf("accepted %d revisions, the keys end at %d", len(x.revs), x.entries[x.len()-1].revEnd)
		}
	})
}
