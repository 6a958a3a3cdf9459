package etcdview

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/etcdscope/etcdscope/embedded/etcdtest"
	"github.com/etcdscope/etcdscope/etcdview/etcdviewtest"
	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/protobuf/proto"
)

// rangeLog records the ranges with values a scan reads: plain ranges and
// streams.
type rangeLog struct {
	Client
	mu      sync.Mutex
	ranges  [][2]string
	streams [][2]string
}

func (c *rangeLog) Get(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.GetResponse, error) {
	if op := clientv3.OpGet(key, opts...); !op.IsKeysOnly() && !op.IsCountOnly() && op.Limit() > 1 {
		c.mu.Lock()
		c.ranges = append(c.ranges, [2]string{key, string(op.RangeBytes())})
		c.mu.Unlock()
	}
	return c.Client.Get(ctx, key, opts...)
}

func (c *rangeLog) GetStream(ctx context.Context, key string, opts ...clientv3.OpOption) (clientv3.GetStreamChan, error) {
	if op := clientv3.OpGet(key, opts...); !op.IsKeysOnly() {
		c.mu.Lock()
		c.streams = append(c.streams, [2]string{key, string(op.RangeBytes())})
		c.mu.Unlock()
	}
	return c.Client.GetStream(ctx, key, opts...)
}

// scanAll scans prefix and returns its records, sorted by key.
func scanAll(t *testing.T, src interface {
	Scan(context.Context, string, ScanOptions, func([]ScanRecord) error) (ScanResult, error)
}, prefix string, opts ScanOptions) ([]ScanRecord, ScanResult) {
	t.Helper()
	var recs []ScanRecord
	res, err := src.Scan(testCtx(t), prefix, opts, func(b []ScanRecord) error {
		recs = append(recs, b...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(recs, func(a, b ScanRecord) int { return strings.Compare(a.Key, b.Key) })
	return recs, res
}

func TestLiveScanReadsEveryKeyOnceAtOneRevisionInBoundedRanges(t *testing.T) {
	defer func(n int64) { maxUnitKeys = n }(maxUnitKeys)
	maxUnitKeys = 50
	eachServer(t, func(t *testing.T, cli *clientv3.Client) {
		var keys []string
		for i := range 240 {
			keys = append(keys, fmt.Sprintf("/registry/pods/ns-%d/pod-%03d", i%4, i))
		}
		keys = append(keys, "/registry/namespaces/ns-0", "/registry/namespaces/ns-1")
		version, entries := int64(1), 2
		if onKine(t, cli) {
			// kine writes /registry/health itself, and counts no versions.
			keys, version, entries = append(keys, "/registry/health"), 0, 3
		}
		rev := etcdviewtest.PutKeys(t, cli, keys, "value")
		// Written after the revision read: not in the scan.
		put(t, cli, "/registry/pods/ns-0/late", "v")
		log := &rangeLog{Client: cli}
		recs, res := scanAll(t, NewLive(log, 0), "/registry/", ScanOptions{Rev: rev})
		if res.Revision != rev || len(recs) != len(keys) {
			t.Fatalf("revision %d, %d records; want %d, %d", res.Revision, len(recs), rev, len(keys))
		}
		slices.Sort(keys)
		for i, r := range recs {
			stored := int64(proto.Size(&mvccpb.KeyValue{Key: []byte(keys[i]), Value: []byte("value"), CreateRevision: r.CreateRevision,
				ModRevision: r.ModRevision, Version: version}))
			if r.Key != keys[i] || r.Size != stored || !r.Current || r.Retained || r.Version != version || r.ModRevision == 0 || r.ModRevision > rev {
				t.Fatalf("record %d: %+v, want %s current, %d bytes, version %d", i, r, keys[i], stored, version)
			}
		}
		// etcd 3.7 streams each entry of the level whole; an etcd that
		// counts every range has the directories of more than
		// maxUnitKeys keys split, so that each range read in pages
		// covers 50 keys at most.
		log.mu.Lock()
		defer log.mu.Unlock()
		if len(log.streams) > 0 {
			if len(log.streams) != entries || len(log.ranges) != 0 {
				t.Errorf("streams %q, ranges %q: want one stream per directory", log.streams, log.ranges)
			}
			return
		}
		for _, r := range log.ranges {
			n := 0
			for _, k := range keys {
				if inRange(k, r[0], r[1]) {
					n++
				}
			}
			if n > int(maxUnitKeys) {
				t.Errorf("range %q..%q read in pages covers %d keys", r[0], r[1], n)
			}
		}
	})
}

func TestLiveScanStopsOnTheCallersErrorAndOnCancel(t *testing.T) {
	_, cli := etcdtest.StartBundled(t, 1)
	var keys []string
	for i := range 3000 {
		keys = append(keys, fmt.Sprintf("/registry/configmaps/ns-%d/cm-%d", i%3, i))
	}
	etcdviewtest.PutKeys(t, cli, keys, strings.Repeat("x", 100))
	l := NewLive(cli, 0)
	stop := errors.New("enough")
	calls := 0
	_, err := l.Scan(testCtx(t), "/registry/", ScanOptions{}, func([]ScanRecord) error { calls++; return stop })
	if !errors.Is(err, stop) || calls != 1 {
		t.Errorf("scan after fn failed: %v after %d calls, want the caller's error after 1", err, calls)
	}
	ctx, cancel := context.WithCancel(testCtx(t))
	_, err = l.Scan(ctx, "/registry/", ScanOptions{History: true}, func([]ScanRecord) error { cancel(); return nil })
	if !errors.Is(err, context.Canceled) {
		t.Errorf("scan cancelled: %v, want context.Canceled", err)
	}
}

func TestLiveScanReportsProgressAgainstTheCount(t *testing.T) {
	_, cli := etcdtest.StartBundled(t, 1)
	var keys []string
	for i := range 500 {
		keys = append(keys, fmt.Sprintf("/registry/secrets/ns/s-%d", i))
	}
	etcdviewtest.PutKeys(t, cli, keys, "v")
	var last ScanProgress
	_, err := NewLive(cli, 0).Scan(testCtx(t), "/registry/", ScanOptions{Progress: func(p ScanProgress) { last = p }},
		func([]ScanRecord) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	// The count runs beside the read: by the last batch it may not have
	// come, but the keys read are all of them.
	if last.Phase != ScanValues || last.Done != 500 || (last.Total != 0 && last.Total != 500) {
		t.Errorf("last progress %+v, want 500 values done, of 500 when counted", last)
	}
}

func TestScanOfACompactedRevisionSaysWhereHistoryBegins(t *testing.T) {
	_, cli := etcdtest.StartBundled(t, 1)
	first := put(t, cli, "/registry/pods/ns/a", "1")
	rev := put(t, cli, "/registry/pods/ns/a", "2")
	compact(t, cli, rev)
	_, err := NewLive(cli, 0).Scan(testCtx(t), "/registry/", ScanOptions{Rev: first}, func([]ScanRecord) error { return nil })
	var ce *CompactedError
	if !errors.As(err, &ce) || ce.Compacted != rev {
		t.Errorf("scan at a compacted revision: %v, want the compaction at %d", err, rev)
	}
}
