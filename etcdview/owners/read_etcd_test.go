package owners

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/etcdscope/etcdscope/decode"
	"github.com/etcdscope/etcdscope/embedded/etcdtest"
	"github.com/etcdscope/etcdscope/etcdview"
	"github.com/etcdscope/etcdscope/etcdview/etcdviewtest"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// listed is one page a recording source answered.
type listed struct {
	prefix string
	rev    int64
	keys   []string
	// left is how long the page's context had left when it was asked
	// for; 0 for a context without a deadline.
	left time.Duration
}

// recording is a source that keeps every page it answers, and fails the
// pages of failPrefix with failWith.
type recording struct {
	etcdview.Source
	failPrefix string
	failWith   error

	mu    sync.Mutex
	pages []listed
}

func (r *recording) List(ctx context.Context, prefix string, rev int64, page etcdview.PageToken) (etcdview.Page, error) {
	if prefix == r.failPrefix {
		return etcdview.Page{}, r.failWith
	}
	l := listed{prefix: prefix, rev: rev}
	if d, ok := ctx.Deadline(); ok {
		l.left = time.Until(d)
	}
	p, err := r.Source.List(ctx, prefix, rev, page)
	for _, kv := range p.Keys {
		l.keys = append(l.keys, kv.Key)
	}
	r.mu.Lock()
	r.pages = append(r.pages, l)
	r.mu.Unlock()
	return p, err
}

func owned(name, uid string, owner ...metav1.OwnerReference) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID(uid), OwnerReferences: owner}
}

func controlledBy(apiVersion, kind, name, uid string) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: name, UID: types.UID(uid), Controller: ptr.To(true)}
}

func pod(name string, owner ...metav1.OwnerReference) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: owned(name, "uid-"+name, owner...)}
}

// workload is a Deployment, its ReplicaSet and more Pods than the first
// page of values holds, a ConfigMap, and an Event that claims to own one
// more Pod (the garbage collector, passing Events over, sees that Pod's
// owner as missing).
func workload() []runtime.Object {
	rs := controlledBy("apps/v1", "ReplicaSet", "web-1", "uid-rs")
	objs := []runtime.Object{
		&appsv1.Deployment{ObjectMeta: owned("web", "uid-deploy")},
		&appsv1.ReplicaSet{ObjectMeta: owned("web-1", "uid-rs", controlledBy("apps/v1", "Deployment", "web", "uid-deploy"))},
		&corev1.ConfigMap{ObjectMeta: owned("settings", "uid-cm")},
		&eventsv1.Event{ObjectMeta: owned("web.1", "uid-ev"), EventTime: metav1.MicroTime(metav1.Now())},
		pod("claimed", controlledBy("events.k8s.io/v1", "Event", "web.1", "uid-ev")),
	}
	for i := range etcdview.FirstValuesPage + 3 {
		objs = append(objs, pod(fmt.Sprintf("web-1-%d", i), rs))
	}
	return objs
}

func keysOf(t *testing.T, objs []runtime.Object) []string {
	t.Helper()
	var keys []string
	for _, o := range objs {
		key, err := etcdviewtest.Key(o)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(key, "/registry/events/") {
			keys = append(keys, key)
		}
	}
	slices.Sort(keys)
	return keys
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func TestReadTakesEveryObjectOnceAtOneRevisionAndPassesEventsOver(t *testing.T) {
	_, cli := etcdtest.StartBundled(t, 1)
	objs := workload()
	written := etcdviewtest.Put(t, cli, objs...)
	src := &recording{Source: etcdview.NewLive(cli, 0)}
	var pinned int64
	var progress []int64
	g, rev, err := Read(testCtx(t), src, decode.Decoder{}, 0, Options{
		Timeout: 5 * time.Second,
		// Writes after the revision is pinned are not in the graph: a
		// new Pod, and the ReplicaSet deleted.
		Pinned: func(rev int64) error {
			pinned = rev
			etcdviewtest.Put(t, cli, pod("late"))
			if _, err := cli.Delete(testCtx(t), "/registry/replicasets/default/web-1"); err != nil {
				t.Fatal(err)
			}
			return nil
		},
		Progress: func(read int64) { progress = append(progress, read) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if rev != written || pinned != written {
		t.Errorf("graph of revision %d, pinned at %d, want the last write's, %d", rev, pinned, written)
	}
	want := keysOf(t, objs)
	var read []string
	for _, p := range src.pages {
		if p.rev != written || strings.HasPrefix(p.prefix, "/registry/events/") {
			t.Errorf("read %s at revision %d, want every directory but events at %d", p.prefix, p.rev, written)
		}
		if p.left <= 0 || p.left > 5*time.Second {
			t.Errorf("a page of %s read with %v left, want within the 5s timeout", p.prefix, p.left)
		}
		read = append(read, p.keys...)
	}
	slices.Sort(read)
	if !slices.Equal(read, want) {
		t.Errorf("read the keys\n%q\nwant each object but the Event once\n%q", read, want)
	}
	if len(progress) < 2 || !slices.IsSorted(progress) || progress[len(progress)-1] != int64(len(want)) {
		t.Errorf("progress %v, want counts rising to %d", progress, len(want))
	}
	if g.Len() != len(want)+1 { // and the Event, a missing owner
		t.Errorf("graph of %d nodes, want the %d objects and the Event as a missing owner", g.Len(), len(want))
	}
	id, ok := g.Lookup("/registry/pods/default/web-1-0")
	if !ok || len(g.Owners(id)) != 1 || g.Virtual(g.Owners(id)[0].Owner) {
		t.Fatalf("the Pod's owners %+v, want the ReplicaSet read at the pinned revision", g.Owners(id))
	}
	claimed, _ := g.Lookup("/registry/pods/default/claimed")
	if owner := g.Owners(claimed); len(owner) != 1 || !g.Virtual(owner[0].Owner) {
		t.Errorf("the Pod an Event claims: owners %+v, want a missing one", owner)
	}
}

func TestReadFailsWithTheErrorOfItsRead(t *testing.T) {
	_, cli := etcdtest.StartBundled(t, 1)
	written := etcdviewtest.Put(t, cli, workload()...)
	live := etcdview.NewLive(cli, 0)
	broken := errors.New("the disk went away")
	src := &recording{Source: live, failPrefix: "/registry/pods/", failWith: broken}
	_, rev, err := Read(testCtx(t), src, decode.Decoder{}, 0, Options{})
	var page *ReadError
	if !errors.As(err, &page) || page.Prefix != "/registry/pods/" || page.Revision != written || !errors.Is(err, broken) || rev != written {
		t.Errorf("a page that fails: %v (revision %d), want a ReadError of /registry/pods/ at %d wrapping %q", err, rev, written, broken)
	}
	if want := fmt.Sprintf("read /registry/pods/ at revision %d: the disk went away", written); err == nil || err.Error() != want {
		t.Errorf("error %v, want %q", err, want)
	}

	if _, err := cli.Compact(testCtx(t), written); err != nil {
		t.Fatal(err)
	}
	_, _, err = Read(testCtx(t), live, decode.Decoder{}, written-1, Options{})
	if ce := (*etcdview.CompactedError)(nil); !errors.As(err, &ce) || errors.As(err, &page) {
		t.Errorf("a compacted revision: %v, want the top level's CompactedError as it is", err)
	}

	src = &recording{Source: live}
	refused := errors.New("no such target")
	_, rev, err = Read(testCtx(t), src, decode.Decoder{}, 0, Options{Pinned: func(int64) error { return refused }})
	if err != refused || rev != written || len(src.pages) != 0 {
		t.Errorf("Pinned refusing: %v at revision %d after %d pages, want %q at %d before any", err, rev, len(src.pages), refused, written)
	}
}
