package get

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/etcdscope/etcdscope/cli/cmdutil"
	"github.com/etcdscope/etcdscope/decode"
	"github.com/etcdscope/etcdscope/etcdview"
)

// kube17 is the values a real Kubernetes 1.7 kube-apiserver wrote, at the
// root of the repository.
const kube17 = "../../testdata/kube-1.7/"

// pagesOf serves kvs as a pager, size keys a page, then fails with err
// when err is not nil.
func pagesOf(kvs []etcdview.KV, size int, err error) etcdview.Pager {
	return func(ctx context.Context, yield func(etcdview.Page) error) error {
		for len(kvs) > 0 {
			n := min(len(kvs), size)
			if err := yield(etcdview.Page{Keys: kvs[:n]}); err != nil {
				return err
			}
			kvs = kvs[n:]
		}
		return err
	}
}

// listDoc is the List kubectl prints, whole.
func listDoc(items []json.RawMessage) map[string]any {
	return map[string]any{"apiVersion": "v1", "kind": "List", "items": items}
}

// listValues are objects as stored: a real Pod, custom resources whose
// strings make YAML quote, fold and escape.
func listValues(t *testing.T) [][]byte {
	pod, err := os.ReadFile(kube17 + "storage-pod.bin")
	if err != nil {
		t.Fatal(err)
	}
	return [][]byte{
		pod,
		[]byte(`{"kind": "Thing", "apiVersion": "x.io/v1", "metadata": {"name": "a", "labels": {"x": "1"}}, "spec": {"list": [{"name": "c"}], "e": {}}}`),
		[]byte(`{"kind":"Other","apiVersion":"x.io/v1","b":[1,2.5,{"c":"<d>"}],"a":null,"c":[[],{}],"d":1e21,"e":3.0}`),
		[]byte(`{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"odd"},"data":{"yes":"no","k: v":"- a","sp":" lead","ml":"a\nb\n\n","esc":"\u001b[2J\u0007","long":"` +
			strings.Repeat("word ", 30) + `","ts":"2024-01-02T03:04:05Z","n":"0x1F","u":"日本\u202e"}}`),
	}
}

func TestListStreamsWhatWriteDocPrints(t *testing.T) {
	values := listValues(t)
	dec := decode.Decoder{JSONOnly: true}
	for _, tc := range []struct{ n, page int }{{0, 1000}, {1, 1000}, {4, 2}, {listChunkSize + 1, 7}, {3*listChunkSize + 5, etcdview.ValuesPage}} {
		var kvs []etcdview.KV
		items := []json.RawMessage{} // as a List of every object is made
		for i := range tc.n {
			kv := etcdview.KV{Key: fmt.Sprintf("/registry/pods/ns/p%04d", i), Value: values[i%len(values)], ModRevision: int64(i + 1)}
			item, err := decode.Decoder{}.DecodeAt(kv.Key, kv.Value, kv.ModRevision).JSON(false)
			if err != nil {
				t.Fatal(err)
			}
			kvs, items = append(kvs, kv), append(items, item)
		}
		for output, format := range map[string]listFormat{decode.OutputJSON: jsonList, decode.OutputYAML: yamlList} {
			var want, got bytes.Buffer
			if err := cmdutil.WriteDoc(&want, output, listDoc(items)); err != nil {
				t.Fatal(err)
			}
			if err := writeList(context.Background(), &got, dec, pagesOf(kvs, tc.page, nil), format, nil); err != nil {
				t.Fatal(err)
			}
			if got.String() != want.String() {
				t.Errorf("%s, %d objects in pages of %d: streamed list differs:\n%s\nwant\n%s", output, tc.n, tc.page, got.String(), want.String())
			}
		}
	}
}

func TestListStopsAtTheFirstErrorInKeyOrder(t *testing.T) {
	obj := []byte(`{"kind":"Thing","apiVersion":"x.io/v1","metadata":{"name":"a"}}`)
	var kvs []etcdview.KV
	for i := range 3*listChunkSize + 5 {
		v := obj
		if i == listChunkSize+3 || i == 3*listChunkSize {
			v = []byte("not an object")
		}
		kvs = append(kvs, etcdview.KV{Key: fmt.Sprintf("/registry/things/t%04d", i), Value: v})
	}
	readErr := errors.New("etcd went away")
	for _, tc := range []struct {
		name  string
		kvs   []etcdview.KV
		err   error
		want  string
		items int
	}{
		{"a value that is no object", kvs, nil, "/registry/things/t0253: text value holds no object", listChunkSize + 3},
		{"a read that fails after two pages", kvs[:listChunkSize], readErr, readErr.Error(), listChunkSize},
	} {
		for output, format := range map[string]listFormat{decode.OutputJSON: jsonList, decode.OutputYAML: yamlList} {
			t.Run(tc.name+" "+output, func(t *testing.T) {
				var out bytes.Buffer
				err := writeList(context.Background(), &out, decode.Decoder{JSONOnly: true}, pagesOf(tc.kvs, listChunkSize/2, tc.err), format, nil)
				if err == nil || err.Error() != tc.want {
					t.Fatalf("error = %v, want %s", err, tc.want)
				}
				kinds := strings.Count(out.String(), `"kind": "Thing"`) + strings.Count(out.String(), "  kind: Thing\n")
				if kinds != tc.items {
					t.Errorf("%d objects written before the error, want the %d before it", kinds, tc.items)
				}
				if strings.Contains(out.String(), "List") {
					t.Errorf("the List is whole, as if nothing had failed")
				}
			})
		}
	}
}

// TestListEndsPromptlyOnCtrlC cancels `get -A -o json` and `-o yaml` while
// they stream an endless listing, the context the first Ctrl-C cancels,
// and checks that each returns within a second, saying it was cancelled,
// and leaves no goroutine behind: before, a chunk queued for the writer but
// not yet for the workers could make the writer wait forever.
func TestListEndsPromptlyOnCtrlC(t *testing.T) {
	values := listValues(t)
	endless := func(ctx context.Context, yield func(etcdview.Page) error) error {
		page := make([]etcdview.KV, etcdview.ValuesPage)
		for i := range page {
			page[i] = etcdview.KV{Key: fmt.Sprintf("/registry/pods/ns/p%04d", i), Value: values[i%len(values)], ModRevision: 7}
		}
		for {
			if err := yield(etcdview.Page{Keys: page}); err != nil {
				return err
			}
		}
	}
	for output, format := range map[string]listFormat{decode.OutputJSON: jsonList, decode.OutputYAML: yamlList} {
		ctx, cancel := context.WithCancel(context.Background())
		out := &firstWrite{arrived: make(chan struct{})}
		done := make(chan error, 1)
		go func() { done <- writeList(ctx, out, decode.Decoder{JSONOnly: true}, endless, format, nil) }()
		select {
		case <-out.arrived:
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: no output within 30s", output)
		}
		cancel()
		select {
		case err := <-done:
			if !errors.Is(err, context.Canceled) {
				t.Errorf("%s: cancelled list returned %v", output, err)
			}
		case <-time.After(time.Second):
			t.Fatalf("%s: still listing a second after the context ended", output)
		}
		waitGoroutinesGone(t, "cli.inOrder[...].func1", "cli.inOrder[...].func2", "cli.(*chunk[...]).run")
	}
}

// TestListWritesItemsBeforeTheLastPageIsRead holds back the last page of a
// listing until the first items are out: a List built whole before it is
// written (as -o yaml was, 23 GB for 100k pods) never gets there.
func TestListWritesItemsBeforeTheLastPageIsRead(t *testing.T) {
	values := listValues(t)
	page := make([]etcdview.KV, etcdview.ValuesPage)
	for i := range page {
		page[i] = etcdview.KV{Key: fmt.Sprintf("/registry/pods/ns/p%04d", i), Value: values[i%len(values)], ModRevision: 7}
	}
	for output, format := range map[string]listFormat{decode.OutputJSON: jsonList, decode.OutputYAML: yamlList} {
		out := &firstWrite{arrived: make(chan struct{})}
		pages := func(ctx context.Context, yield func(etcdview.Page) error) error {
			for range 3 {
				if err := yield(etcdview.Page{Keys: page}); err != nil {
					return err
				}
			}
			select {
			case <-out.arrived:
			case <-time.After(30 * time.Second):
				return errors.New("nothing written while three pages were listed")
			}
			return yield(etcdview.Page{Keys: page})
		}
		if err := writeList(context.Background(), out, decode.Decoder{JSONOnly: true}, pages, format, nil); err != nil {
			t.Errorf("-o %s: %v", output, err)
		}
	}
}

// TestListEndsWhenCancelledAsAPageArrives cancels the context just as the
// reader hands over a page, so that each chunk of it may be queued on
// either side of the cancellation, many times over: the list must end, and
// say it was cancelled, every time.
func TestListEndsWhenCancelledAsAPageArrives(t *testing.T) {
	values := listValues(t)
	page := make([]etcdview.KV, 4*listChunkSize)
	for i := range page {
		page[i] = etcdview.KV{Key: fmt.Sprintf("/registry/pods/ns/p%04d", i), Value: values[i%len(values)], ModRevision: 7}
	}
	for range 20 {
		ctx, cancel := context.WithCancel(context.Background())
		pages := func(ctx context.Context, yield func(etcdview.Page) error) error {
			for i := 0; ; i++ {
				if i == 2 {
					cancel()
				}
				if err := yield(etcdview.Page{Keys: page}); err != nil {
					return err
				}
			}
		}
		done := make(chan error, 1)
		go func() { done <- writeList(ctx, io.Discard, decode.Decoder{JSONOnly: true}, pages, jsonList, nil) }()
		select {
		case err := <-done:
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("cancelled list returned %v", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("the list hangs after its context ended")
		}
	}
	waitGoroutinesGone(t, "cli.inOrder[...].func1", "cli.inOrder[...].func2", "cli.(*chunk[...]).run")
}

// firstWrite discards what is written and says when the first write came.
type firstWrite struct {
	once    sync.Once
	arrived chan struct{}
}

func (w *firstWrite) Write(p []byte) (int, error) {
	w.once.Do(func() { close(w.arrived) })
	return len(p), nil
}

// waitGoroutinesGone fails unless, within 5s, no goroutine is running any
// of funcs.
func waitGoroutinesGone(t *testing.T, funcs ...string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		buf := make([]byte, 1<<20)
		stacks := string(buf[:runtime.Stack(buf, true)])
		left := ""
		for _, f := range funcs {
			if strings.Contains(stacks, f+"(") {
				left = f
			}
		}
		if left == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("a goroutine still runs %s:\n%s", left, stacks)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
