package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"runtime"
	"sync"

	"github.com/etcdscope/etcdscope/decode"
	"github.com/etcdscope/etcdscope/etcdview"
)

// listFormat is how writeList prints a List as `kubectl get -o json` or
// `-o yaml` prints it: head, then open before the first item, the items,
// closeFull after them or closeEmpty when there are none, then tail.
type listFormat struct {
	head, open, closeFull, closeEmpty, tail string
	// item appends one object; first is true for the List's first.
	item func(dst []byte, o decode.Object, first bool) ([]byte, error)
}

// jsonList is writeDoc's JSON of a List: encoding/json indented by four.
var jsonList = listFormat{
	head:      "{\n    \"apiVersion\": \"v1\",\n    \"items\": [",
	closeFull: "\n    ",
	tail:      "],\n    \"kind\": \"List\"\n}\n",
	item: func(dst []byte, o decode.Object, first bool) ([]byte, error) {
		sep := ",\n        "
		if first {
			sep = sep[1:]
		}
		return o.AppendJSON(append(dst, sep...), "        ")
	},
}

// yamlList is sigs.k8s.io/yaml's YAML of that JSON: apiVersion, items and
// kind in its key order, each item "- " at column 0.
var yamlList = listFormat{
	head:       "apiVersion: v1\n",
	open:       "items:\n",
	closeEmpty: "items: []\n",
	tail:       "kind: List\n",
	item: func(dst []byte, o decode.Object, _ bool) ([]byte, error) {
		return o.AppendYAMLItem(dst)
	},
}

// listChunk is a run of consecutive objects of a List, decoded and written
// into place by one worker.
type listChunk struct {
	kvs   []etcdview.KV
	first bool // the List's first items
	out   []byte
	err   error // the first object that would not decode, in key order
	done  chan struct{}
}

// listGCPercent is GOGC while get lists: the heap may grow to five times
// what is live. What stays live is a few pages, some tens of MiB, while
// every object allocates its own as it is decoded and dropped: with the
// default the collector would run every few hundred objects, and mark it
// all each time. listMemoryLimit caps what that lets the runtime's memory
// reach: the process is about 100 MB resident before it lists (the binary,
// and the API types it registers), and a List must stay under 200 MB.
// Measured on 100k Pods (etcd 3.4, 2 cores): peak RSS 203 MB at 128 MiB,
// 176 MB at 112 MiB, and -o json 2% slower than with no limit, 9% at 96.
const (
	listGCPercent   = 400
	listMemoryLimit = 112 << 20
)

// listChunkSize, listChunkBytes and listReadAhead bound the work in
// flight: chunks small enough to keep every core busy to the last page
// (250 objects, fewer when their values pass listChunkBytes), and a page
// of them queued, so that etcd's next page comes while this one is decoded.
const (
	listChunkSize  = 250
	listChunkBytes = 512 << 10
	listReadAhead  = listValuesPage / listChunkSize
)

// chunkLen is how many of kvs, at least one, make the next chunk.
func chunkLen(kvs []etcdview.KV) int {
	n, size := 0, 0
	for n < len(kvs) && n < listChunkSize && (n == 0 || size+len(kvs[n].Value) <= listChunkBytes) {
		size += len(kvs[n].Value)
		n++
	}
	return n
}

// chunkBuffers recycles the chunks' output: each is a few hundred KiB, and a
// new one is zeroed by the allocator every time.
var chunkBuffers = sync.Pool{New: func() any { return new([]byte) }}

func (c *listChunk) decode(ctx context.Context, dec decode.Decoder, format listFormat) {
	defer close(c.done)
	if c.err = ctx.Err(); c.err != nil {
		return // the List is abandoned: a chunk that waited is not decoded
	}
	buf := (*chunkBuffers.Get().(*[]byte))[:0]
	for i, kv := range c.kvs {
		item, err := format.item(buf, dec.DecodeAt(kv.Key, kv.Value, kv.ModRevision), i == 0 && c.first)
		if err != nil {
			c.err = fmt.Errorf("%s: %w", decode.EscapeKey(kv.Key), err)
			break
		}
		buf = item
	}
	c.kvs, c.out = nil, buf
}

// writeList prints the List of `get -o json` or `-o yaml` as writeDoc
// prints the List of every object, streaming: pages are read ahead,
// decoded on every core a chunk at a time, and written in key order as
// they are done, so that memory holds a few pages, not the whole List, and
// etcd, decoding and output overlap. The first error in key order ends it,
// after the objects before it; so does the end of ctx (Ctrl-C), at once:
// no chunk is waited for that a worker has not started.
func writeList(ctx context.Context, w io.Writer, dec decode.Decoder, pages pager, format listFormat) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	work := make(chan *listChunk, listReadAhead)
	ordered := make(chan *listChunk, listReadAhead)
	var workers sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		workers.Go(func() {
			for c := range work {
				c.decode(ctx, dec, format)
			}
		})
	}
	var readErr error // set before ordered is closed
	go func() {
		defer close(ordered)
		defer close(work)
		first := true
		readErr = pages(ctx, func(kvs []etcdview.KV) error {
			for len(kvs) > 0 {
				n := chunkLen(kvs)
				c := &listChunk{kvs: kvs[:n], first: first, done: make(chan struct{})}
				kvs, first = kvs[n:], false
				// Work first: a chunk the writer waits for is always
				// one a worker will finish.
				for _, ch := range []chan *listChunk{work, ordered} {
					select {
					case ch <- c:
					case <-ctx.Done():
						return ctx.Err()
					}
				}
			}
			return nil
		})
	}()
	out := bufio.NewWriterSize(w, 256<<10)
	out.WriteString(format.head)
	empty, err := writeChunks(ctx, out, ordered, format)
	if err != nil {
		cancel()
		for range ordered {
		}
	}
	workers.Wait()
	if err == nil {
		err = readErr
	}
	if err != nil {
		out.Flush() // what came before the error, and no end: the List is not whole
		return err
	}
	if empty {
		out.WriteString(format.closeEmpty)
	} else {
		out.WriteString(format.closeFull)
	}
	out.WriteString(format.tail)
	return out.Flush()
}

// writeChunks writes the chunks' items in the order the chunks come, and
// says whether there were none.
func writeChunks(ctx context.Context, out *bufio.Writer, chunks <-chan *listChunk, format listFormat) (empty bool, err error) {
	empty = true
	for c := range chunks {
		select {
		case <-c.done:
		case <-ctx.Done():
			return empty, ctx.Err()
		}
		if empty {
			out.WriteString(format.open)
		}
		if _, err := out.Write(c.out); err != nil {
			return empty, err
		}
		chunkBuffers.Put(&c.out)
		if c.err != nil {
			return empty, c.err
		}
		empty = false
	}
	return empty, nil
}
