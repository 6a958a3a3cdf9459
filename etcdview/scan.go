package etcdview

import (
	"context"
	"errors"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"golang.org/x/sync/errgroup"
	"google.golang.org/protobuf/proto"
)

// ScanRecord is one revision of one key that a scan read. It holds no
// value: what a scan sums is sizes, and a value kept per record would make
// its memory grow with the store.
type ScanRecord struct {
	Key string
	// Size is the bytes etcd stores for the revision: an mvccpb.KeyValue
	// of the key, the value, its revisions, version and lease (a deletion's
	// holds the key alone). A data file's are the bytes in its "key" bucket;
	// a live etcd answers with the same KeyValue, whose size is the same.
	Size           int64
	CreateRevision int64
	ModRevision    int64
	Version        int64
	Lease          int64
	Tombstone      bool
	// Current says the record is the key as of the scan's revision.
	Current bool
	// Retained says the record is one of the revisions etcd holds, which
	// a scan asked for History counts. The current revision of a key is
	// one of them, and comes as one record with both flags from a data
	// file, and as two records from a live etcd (the read of the values,
	// then the replay).
	Retained bool
}

// ScanOptions configure Scan.
type ScanOptions struct {
	Rev int64 // the revision to read at; 0 is the newest
	// History asks for every revision etcd still holds below the prefix,
	// as Retained records. A data file holds them all and gives them
	// always. A live etcd gives them through a watch replayed from its
	// compaction revision, plus a read at that revision: a read of every
	// revision it holds, about its DB size in use, on top of the values.
	History bool
	// Progress, when set, is told how far the scan is, from the goroutine
	// that calls the scan's fn, between two calls.
	Progress func(ScanProgress)
}

// ScanPhase is what a scan is reading.
type ScanPhase string

const (
	// ScanValues is the read of every key's value as of the revision.
	ScanValues ScanPhase = "values"
	// ScanHistory is the read of the revisions etcd still holds.
	ScanHistory ScanPhase = "history"
)

// ScanProgress is how far a scan is in its phase: Done of Total keys (values)
// or revisions (history). Total is 0 while it is not known.
type ScanProgress struct {
	Phase       ScanPhase
	Done, Total int64
}

// ScanResult is what a scan read as a whole.
type ScanResult struct {
	Revision int64 // the revision read at
	// CompactRevision is the store's last compaction, when the scan
	// learned it: history before it is gone.
	CompactRevision int64
	History         bool    // Retained records were delivered
	Layout          *Layout // the data file's pages, for a File
}

// scanWorkers is how many ranges of a live scan are in flight: etcd serves
// each on a core of its own, and the client decodes each on another.
const scanWorkers = 3

// Scan reads every key below prefix with its size and metadata, as of
// opts.Rev, and hands the records to fn a batch at a time, from one
// goroutine; fn may not keep a batch after it returns. With opts.History it
// then replays the revisions etcd still holds (see ScanOptions). Values are
// read a range at a time, a few in flight: at most scanWorkers ranges and
// as many batches are in memory.
func (l *Live) Scan(ctx context.Context, prefix string, opts ScanOptions, fn func([]ScanRecord) error) (ScanResult, error) {
	key, _ := prefixRange(prefix)
	head, err := l.rangeKeys(ctx, rangeRequest{key: key, rev: opts.Rev})
	if err != nil {
		return ScanResult{}, err
	}
	res := ScanResult{Revision: opts.Rev}
	if res.Revision == 0 {
		res.Revision = head.rev
	}
	report := func(ScanProgress) {}
	if opts.Progress != nil {
		report = opts.Progress
	}
	total := make(chan int64, 1)
	if opts.Progress != nil {
		// Counting makes etcd walk every key of the range: only for a
		// caller that shows progress, and beside the read.
		go func() {
			n, _ := l.Count(ctx, prefix, res.Revision)
			total <- n
		}()
	}
	units, err := l.scanUnits(ctx, prefix, res.Revision)
	if err != nil {
		return res, err
	}
	var done, all int64
	err = l.readUnits(ctx, units, res.Revision, func(recs []ScanRecord) error {
		select {
		case all = <-total:
		default:
		}
		done += int64(len(recs))
		if err := fn(recs); err != nil {
			return err
		}
		report(ScanProgress{Phase: ScanValues, Done: done, Total: all})
		return nil
	}, ScanRecord{Current: true})
	if err != nil || !opts.History {
		return res, err
	}
	res.History = true
	res.CompactRevision, err = l.replayHeld(ctx, prefix, res.Revision, fn, report)
	return res, err
}

// scanUnit is one range a live scan reads: [key, end).
type scanUnit struct{ key, end string }

// maxUnitKeys bounds the keys of a range read in pages from an etcd that
// counts every range it is asked for (before 3.7): each page costs etcd a
// walk of the rest of its range, so pages over n keys cost n²/(2 × page
// size) steps of its index: 100k steps for 10k keys in pages of 500. A
// variable, so that tests split small directories.
var maxUnitKeys int64 = 10_000

// scanUnits splits the keys below prefix into ranges, one per entry of its
// level (a directory, or a run of keys), so that a few can be read at
// once. On an etcd that counts every range, a directory of more than
// maxUnitKeys keys is split again into its own entries, three levels down
// at most (kube-apiserver's resource, namespace, name), and a run of keys
// into runs of maxUnitKeys.
func (l *Live) scanUnits(ctx context.Context, prefix string, rev int64) ([]scanUnit, error) {
	return l.splitLevel(ctx, prefix, rev, 3)
}

func (l *Live) splitLevel(ctx context.Context, prefix string, rev int64, depth int) ([]scanUnit, error) {
	lvl, err := l.Children(ctx, prefix, rev)
	if err != nil {
		return nil, err
	}
	run := len(lvl.Children)
	if l.noStream.Load() {
		run = int(maxUnitKeys)
	}
	var units []scanUnit
	for i := 0; i < len(lvl.Children); i++ {
		c := lvl.Children[i]
		if !c.Dir {
			// A run of keys: from the first to just past the last.
			j := i
			for j+1 < len(lvl.Children) && !lvl.Children[j+1].Dir && j+1-i < run {
				j++
			}
			units = append(units, scanUnit{key: c.Prefix, end: lvl.Children[j].Prefix + "\x00"})
			i = j
			continue
		}
		more, err := l.splitDir(ctx, c, rev, depth)
		if err != nil {
			return nil, err
		}
		units = append(units, more...)
	}
	return units, nil
}

// splitDir is the one range of directory c, or on an etcd that counts every
// range and for more than maxUnitKeys keys, the ranges of its entries.
func (l *Live) splitDir(ctx context.Context, c Child, rev int64, depth int) ([]scanUnit, error) {
	key, end := prefixRange(c.Prefix)
	whole := []scanUnit{{key: key, end: end}}
	if !l.noStream.Load() || depth <= 1 || (c.Count != CountUnknown && c.Count <= maxUnitKeys) {
		return whole, nil
	}
	n, err := l.Count(ctx, c.Prefix, rev)
	if err != nil || n <= maxUnitKeys {
		return whole, err
	}
	return l.splitLevel(ctx, c.Prefix, rev, depth-1)
}

// readUnits reads every unit, scanWorkers at a time, and calls fn with each
// batch, one call at a time, every record flagged as like is.
func (l *Live) readUnits(ctx context.Context, units []scanUnit, rev int64, fn func([]ScanRecord) error, like ScanRecord) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(scanWorkers)
	batches := make(chan []ScanRecord, scanWorkers)
	read := make(chan error, 1)
	go func() {
		for _, u := range units {
			g.Go(func() error { return l.readUnit(gctx, u, rev, like, batches) })
		}
		read <- g.Wait()
		close(batches)
	}()
	var fnErr error
	for b := range batches {
		if fnErr == nil {
			if fnErr = fn(b); fnErr != nil {
				cancel()
			}
		}
	}
	if err := <-read; fnErr == nil {
		return err
	}
	return fnErr
}

// readUnit reads one unit through RangeStream (etcd 3.7 and later), or in
// pages of plain ranges before, and sends its records a batch at a time.
func (l *Live) readUnit(ctx context.Context, u scanUnit, rev int64, like ScanRecord, out chan<- []ScanRecord) error {
	if !l.noStream.Load() {
		err := l.streamUnit(ctx, u, rev, like, out)
		if !errors.Is(err, errNoStream) {
			return err
		}
		l.noStream.Store(true)
	}
	return l.pageUnit(ctx, u, rev, like, out)
}

// streamUnit reads u through one RangeStream: etcd sends it in chunks of
// about its --max-request-bytes (1.5 MiB by default) without counting the
// range, and the client holds one chunk while this goroutine converts the
// last. The command timeout bounds the wait for each chunk, not the whole.
func (l *Live) streamUnit(ctx context.Context, u scanUnit, rev int64, like ScanRecord, out chan<- []ScanRecord) error {
	sctx, cancel, touch := l.idleBound(ctx)
	chunks, err := l.c.GetStream(sctx, u.key, clientv3.WithRange(u.end), clientv3.WithRev(rev))
	if err != nil {
		cancel()
		return l.streamError(ctx, sctx, rangeRequest{key: u.key, end: u.end, rev: rev}, idleError(sctx, err))
	}
	defer func() {
		cancel()
		for range chunks {
		}
	}()
	for chunk := range chunks {
		touch()
		if err := chunk.Err(); err != nil {
			return l.streamError(ctx, sctx, rangeRequest{key: u.key, end: u.end, rev: rev}, idleError(sctx, err))
		}
		recs := make([]ScanRecord, len(chunk.Kvs))
		for i, kv := range chunk.Kvs {
			recs[i] = recordOf(kv, like)
		}
		if err := send(ctx, out, recs); err != nil {
			return err
		}
	}
	return nil
}

// Pages of a unit read by plain ranges: sized like etcd sizes its stream's
// chunks, between 0.5 and 2 times pageBytes, from pageKeys keys to start.
const (
	pageKeys  = 500
	pageBytes = 4 << 20
)

// pageUnit reads u in pages of plain ranges, each under the command
// timeout. Each page's size follows the last one's bytes, so that a
// directory of 1 MiB values does not come 500 at a time.
func (l *Live) pageUnit(ctx context.Context, u scanUnit, rev int64, like ScanRecord, out chan<- []ScanRecord) error {
	key, limit := u.key, int64(pageKeys)
	for {
		res, err := l.rangeKeys(ctx, rangeRequest{key: key, end: u.end, rev: rev, limit: limit})
		if err != nil {
			return err
		}
		recs := make([]ScanRecord, len(res.kvs))
		var bytes int64
		for i, kv := range res.kvs {
			recs[i] = recordOf(&mvccpb.KeyValue{Key: []byte(kv.Key), Value: kv.Value, CreateRevision: kv.CreateRevision,
				ModRevision: kv.ModRevision, Version: kv.Version, Lease: kv.Lease}, like)
			bytes += recs[i].Size
		}
		if err := send(ctx, out, recs); err != nil {
			return err
		}
		if !res.more || len(res.kvs) == 0 {
			return nil
		}
		key = res.kvs[len(res.kvs)-1].Key + "\x00"
		switch {
		case bytes < pageBytes/2:
			limit *= 2
		case bytes > 2*pageBytes:
			limit = max(1, limit/2)
		}
	}
}

func send(ctx context.Context, out chan<- []ScanRecord, recs []ScanRecord) error {
	select {
	case out <- recs:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// recordOf is kv, as etcd answered it, as a record flagged as like. A
// deletion is stored as a KeyValue of its key alone (mvcc's storeTxnWrite
// delete); a watch's DELETE event carries the deletion's revision besides.
func recordOf(kv *mvccpb.KeyValue, like ScanRecord) ScanRecord {
	like.Key = string(kv.Key)
	like.CreateRevision, like.ModRevision, like.Version, like.Lease = kv.CreateRevision, kv.ModRevision, kv.Version, kv.Lease
	if like.Tombstone {
		like.Size = int64(proto.Size(&mvccpb.KeyValue{Key: kv.Key}))
	} else {
		like.Size = int64(proto.Size(kv))
	}
	return like
}

// idleBound is ctx ended by the command timeout when touch has not been
// called for that long: the bound of each answer of a stream.
func (l *Live) idleBound(ctx context.Context) (context.Context, context.CancelFunc, func()) {
	t := l.commandTimeout()
	ctx, cancel := context.WithCancelCause(ctx)
	timer := time.AfterFunc(t.after, func() { cancel(t) })
	return ctx, func() { timer.Stop(); cancel(context.Canceled) }, func() { timer.Reset(t.after) }
}

// idleError is err of a call made under an idleBound context: the timeout
// when it ended the call.
func idleError(ctx context.Context, err error) error {
	var t *timeout
	if errors.As(context.Cause(ctx), &t) {
		return t
	}
	return err
}
