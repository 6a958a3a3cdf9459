package etcdview

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"

	bolt "go.etcd.io/bbolt"
)

// sidecar keeps a data file's key index in a file of its own, so that the
// next command on an unchanged file reads it instead of the whole "key"
// bucket. It is a cache: one that is missing, stale, corrupt or of another
// format is ignored and rebuilt, and failing to write one fails nothing.
type sidecar struct {
	// paths are where the index may be kept, in the order tried: beside the
	// data file, then under the user's cache directory. None when the file
	// is too small to be worth one.
	paths []string
	id    fileIdentity
}

// fileIdentity tells the data file an index was built from. Every bbolt
// commit writes one of the file's two meta pages, at its start, with the
// commit's transaction id, the root of its tree and a checksum: a file
// whose first bytes, size and modification time are unchanged holds the
// same data.
type fileIdentity struct {
	size, mtime int64
	head        [sha256.Size]byte // of the first identityBytes of the file
}

// identityBytes covers both meta pages for bbolt's page sizes up to 32 KiB.
const identityBytes = 64 << 10

// sidecarOptions say where a sidecar may go.
type sidecarOptions struct {
	// minSize is the smallest data file given a sidecar: the pass over a
	// smaller one takes some tens of milliseconds (about one a megabyte
	// on the bench's file), not worth a file beside the user's.
	minSize int64
	// cacheDir is the user's cache directory ("" when it has none).
	cacheDir string
}

// defaultSidecar is what OpenFile uses: XDG_CACHE_HOME or ~/.cache.
func defaultSidecar() sidecarOptions {
	dir, _ := os.UserCacheDir()
	return sidecarOptions{minSize: 32 << 20, cacheDir: dir}
}

// newSidecar finds where the index of the data file at path may be kept,
// and what identifies the file.
func newSidecar(path string, o sidecarOptions) (sidecar, error) {
	fi, err := os.Stat(path)
	if err != nil || fi.Size() < o.minSize {
		return sidecar{}, err
	}
	id, err := identify(path, fi)
	if err != nil {
		return sidecar{}, err
	}
	s := sidecar{id: id}
	// etcd warns of any file in a member's snap directory that is neither
	// a .snap nor "db" (snap.Snapshotter's checkSuffix): a member's file
	// gets its index in the cache directory only.
	if !(filepath.Base(path) == "db" && filepath.Base(filepath.Dir(path)) == "snap") {
		s.paths = append(s.paths, path+".etcdscope-index")
	}
	if abs, err := filepath.Abs(path); err == nil && o.cacheDir != "" {
		sum := sha256.Sum256([]byte(abs))
		name := hex.EncodeToString(sum[:8]) + "-" + filepath.Base(path) + ".index"
		s.paths = append(s.paths, filepath.Join(o.cacheDir, "etcdscope", name))
	}
	return s, nil
}

func identify(path string, fi os.FileInfo) (fileIdentity, error) {
	in, err := os.Open(path)
	if err != nil {
		return fileIdentity{}, err
	}
	defer in.Close()
	h := sha256.New()
	if _, err := io.CopyN(h, in, identityBytes); err != nil && !errors.Is(err, io.EOF) {
		return fileIdentity{}, err
	}
	id := fileIdentity{size: fi.Size(), mtime: fi.ModTime().UnixNano()}
	h.Sum(id.head[:0])
	return id, nil
}

// index is the file's key index: read from the first sidecar that holds a
// valid one for this very file, else built from the bucket and saved.
func (s sidecar) index(keys *bolt.Bucket) (keyIndex, error) {
	for _, p := range s.paths {
		if x, err := readSidecar(p, s.id); err == nil {
			return x, nil
		}
	}
	x, err := buildIndex(keys)
	if err != nil {
		return x, err
	}
	for _, p := range s.paths {
		if writeSidecar(p, s.id, &x) == nil {
			break
		}
	}
	return x, nil
}

func readSidecar(path string, id fileIdentity) (keyIndex, error) {
	in, err := os.Open(path)
	if err != nil {
		return keyIndex{}, err
	}
	defer in.Close()
	// The header alone tells a stale or foreign file, before the rest is
	// read.
	head := make([]byte, len(sidecarHeader(id)))
	if _, err := io.ReadFull(in, head); err != nil {
		return keyIndex{}, err
	}
	if !bytes.Equal(head, sidecarHeader(id)) {
		return keyIndex{}, errStaleSidecar
	}
	fi, err := in.Stat()
	if err != nil {
		return keyIndex{}, err
	}
	// Each revision the data file holds takes more bytes there (its
	// bucket key, and the key again in its value) than here: a larger
	// index is not one of this file.
	if fi.Size() > id.size+int64(len(head))+4 {
		return keyIndex{}, errCorruptSidecar
	}
	// Read in one piece of the file's size: ReadAll's growing buffer would
	// hold the index twice over at its peak.
	rest := make([]byte, fi.Size()-int64(len(head)))
	if _, err := io.ReadFull(in, rest); err != nil {
		return keyIndex{}, err
	}
	return decodeIndex(head, rest)
}

var errStaleSidecar = errors.New("the index was built from another file, or by another format")

// writeSidecar saves x as the index of the file id, atomically: written
// to a temporary file beside it, then renamed over it, so that a reader
// sees the old index or the new, never a part. It is not synced: a torn
// file after a crash fails its checksum and is rebuilt.
func writeSidecar(path string, id fileIdentity, x *keyIndex) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	err = encodeIndex(tmp, sidecarHeader(id), x)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
