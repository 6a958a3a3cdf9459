package etcdview

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/etcdscope/etcdscope/etcdview/etcdviewtest"
	clientv3 "go.etcd.io/etcd/client/v3"
)

func TestChildrenRangeCallsGrowWithChildrenNotKeys(t *testing.T) {
	const prefixes, perPrefix = 50, 200
	eachServer(t, func(t *testing.T, cli *clientv3.Client) {
		var keys []string
		for p := range prefixes {
			for k := range perPrefix {
				keys = append(keys, fmt.Sprintf("/registry/res%02d/ns/obj-%04d", p, k))
			}
		}
		etcdviewtest.PutKeys(t, cli, keys, "v")
		put(t, cli, "/registry/zz-leaf", "a key beside the directories")
		cc := &countingClient{Client: cli}
		src := NewLive(cc, 0)

		lvl, err := src.Children(testCtx(t), "/registry/", 0)
		if err != nil {
			t.Fatal(err)
		}
		children := lvl.Children
		if onKine(t, cli) {
			// kine writes /registry/health itself.
			if len(children) == 0 || children[0].Prefix != "/registry/health" {
				t.Fatalf("children %+v of kine, want /registry/health first", children)
			}
			children = children[1:]
		}
		if len(children) != prefixes+1 {
			t.Fatalf("%d children, want %d: %+v", len(children), prefixes+1, children)
		}
		// A directory larger than the batch is left for Count.
		for i, c := range children[:prefixes] {
			want := Child{Name: fmt.Sprintf("res%02d/", i), Prefix: fmt.Sprintf("/registry/res%02d/", i), Dir: true, Count: CountUnknown}
			if c != want {
				t.Errorf("child %d = %+v, want %+v", i, c, want)
			}
		}
		if leaf := children[prefixes]; leaf.Dir || leaf.Prefix != "/registry/zz-leaf" || leaf.Count != 1 {
			t.Errorf("last child %+v, want the key /registry/zz-leaf", leaf)
		}
		// A keys-only range or two per child (a narrow one that guesses
		// the next of the run res00/, res01/, ..., and the one to the end
		// of the level where the guess misses), plus the one-key read that
		// pins the revision: never one per key.
		calls, limit := cc.gets.Load()+cc.streams.Load(), int64(2*(len(lvl.Children))+2)
		if calls > limit {
			t.Errorf("%d range calls for %d children over %d keys, want at most %d", calls, prefixes+1, len(keys), limit)
		}
		if strings.HasPrefix(t.Name(), "TestChildrenRangeCallsGrowWithChildrenNotKeys/embedded") && cc.streams.Load() < prefixes {
			t.Errorf("%d range streams on etcd 3.7, want one per directory: etcd counts a Range to the end of the level", cc.streams.Load())
		}

		if err := CountChildren(testCtx(t), src, &lvl); err != nil {
			t.Fatal(err)
		}
		for _, c := range children[:prefixes] {
			if c.Count != perPrefix {
				t.Errorf("%s counts %d keys, want %d", c.Prefix, c.Count, perPrefix)
			}
		}
		if n, err := src.Count(testCtx(t), "/registry/", lvl.Revision); err != nil || n != int64(len(lvl.Children)-prefixes+len(keys)) {
			t.Errorf("Count(/registry/) = %d, %v; want %d", n, err, len(lvl.Children)-prefixes+len(keys))
		}
	})
}

func TestChildrenReadsOneRevision(t *testing.T) {
	eachServer(t, func(t *testing.T, cli *clientv3.Client) {
		// More pods in default than a batch holds, so that a level takes
		// more than one range.
		var pods []string
		for i := range scanBatch + 50 {
			pods = append(pods, fmt.Sprintf("/registry/pods/default/p-%03d", i))
		}
		etcdviewtest.PutKeys(t, cli, pods, "1")
		rev := put(t, cli, "/registry/pods/kube-system/b", "1")
		put(t, cli, "/registry/pods/monitoring/m", "1")
		del(t, cli, "/registry/pods/kube-system/b")
		src := NewLive(cli, 0)
		defaultPods := Child{Name: "default/", Prefix: "/registry/pods/default/", Dir: true, Count: CountUnknown}
		top := []Child{{Name: "/registry/", Prefix: "/registry/", Dir: true, Count: CountUnknown}}
		if onKine(t, cli) {
			// kine's one listing counts every directory, and it keeps a
			// compact_rev_key (and /registry/health) of its own.
			defaultPods.Count, top[0].Count = int64(len(pods)), int64(len(pods)+2)
			top = append(top, Child{Name: compactRevKey, Prefix: compactRevKey, Count: 1})
		}
		tests := []struct {
			name   string
			prefix string
			rev    int64
			want   []Child
		}{
			{"newest", "/registry/pods/", 0, []Child{defaultPods, {Name: "monitoring/", Prefix: "/registry/pods/monitoring/", Dir: true, Count: 1}}},
			{"as of an earlier revision", "/registry/pods/", rev, []Child{defaultPods, {Name: "kube-system/", Prefix: "/registry/pods/kube-system/", Dir: true, Count: 1}}},
			{"keys of a leaf level", "/registry/pods/kube-system/", rev, []Child{{Name: "b", Prefix: "/registry/pods/kube-system/b", Count: 1}}},
			{"the top of the keyspace", "", 0, top},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				lvl, err := src.Children(testCtx(t), tc.prefix, tc.rev)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(lvl.Children, tc.want) {
					t.Errorf("children %+v, want %+v", lvl.Children, tc.want)
				}
				if tc.rev != 0 && lvl.Revision != tc.rev {
					t.Errorf("level read at revision %d, want %d", lvl.Revision, tc.rev)
				}
			})
		}
	})
}

func TestListPagesEveryKeyOnce(t *testing.T) {
	eachServer(t, func(t *testing.T, cli *clientv3.Client) {
		var want []string
		for i := range 1234 {
			want = append(want, fmt.Sprintf("/registry/configmaps/default/cm-%05d", i))
		}
		etcdviewtest.PutKeys(t, cli, want, "v")
		put(t, cli, "/registry/configmapsx", "outside the prefix")
		src := NewLive(cli, 0)
		var got []string
		var pages int
		page, rev := PageToken{Limit: 100}, int64(0)
		for {
			p, err := src.List(testCtx(t), "/registry/configmaps/", rev, page)
			if err != nil {
				t.Fatal(err)
			}
			pages++
			for _, kv := range p.Keys {
				if kv.Value != nil {
					t.Fatalf("List returned a value for %s", kv.Key)
				}
				got = append(got, kv.Key)
			}
			if p.Next == nil {
				break
			}
			page, rev = *p.Next, p.Revision
		}
		if !slices.Equal(got, want) {
			t.Errorf("listed %d keys, want %d in order", len(got), len(want))
		}
		if pages != 13 {
			t.Errorf("%d pages of 100 for 1234 keys, want 13", pages)
		}
	})
}

func TestChildrenOfTheRegistryLevelAreExact(t *testing.T) {
	// Resources found by the head of their directory (up to the first
	// namespace, a/, then the greatest a resource began with), whole when
	// they have nothing there or are not namespaced, beside custom
	// resources' groups, one defined by a CustomResourceDefinition (found
	// by its head too), and a leaf: the counts are those of every key.
	var keys []string
	add := func(format string, n int) {
		for i := range n {
			keys = append(keys, fmt.Sprintf(format, i))
		}
	}
	keys = append(keys, "/registry/namespaces/a", "/registry/namespaces/default", "/registry/namespaces/team-000")
	add("/registry/configmaps/a/cm-%d", 3)
	add("/registry/configmaps/default/cm-%d", 50)
	add("/registry/crd.example.io/widgets/default/w-%d", 2)
	add("/registry/stable.example.com/crontabs/a/ct-%d", 3)
	add("/registry/stable.example.com/crontabs/team-000/ct-%d", 120)
	keys = append(keys, "/registry/apiextensions.k8s.io/customresourcedefinitions/crontabs.stable.example.com")
	add("/registry/events/team-000/ev-%d", 150)
	add("/registry/minions/node-%d", 7)
	add("/registry/pods/default/pod-%d", 150)
	add("/registry/secrets/a/s-%d", 2)
	add("/registry/secrets/default/s-%d", 40)
	add("/registry/secrets/team-000/s-%d", 80)
	keys = append(keys, "/registry/health", "/registry0")
	slices.Sort(keys)
	eachServer(t, func(t *testing.T, cli *clientv3.Client) {
		etcdviewtest.PutKeys(t, cli, keys, "v")
		src := NewLive(cli, 0)
		lvl, err := src.Children(testCtx(t), "/registry/", 0)
		if err != nil {
			t.Fatal(err)
		}
		// An etcd that counts every range (before 3.7) and kine leave for
		// Count a directory whose head range ended inside it (configmaps/
		// after a/): reading its rest would walk all of it. ls -l counts
		// it.
		if err := CountChildren(testCtx(t), src, &lvl); err != nil {
			t.Fatal(err)
		}
		sameChildren(t, lvl.Children, wantChildren(keys, "/registry/"), false)
	})
}
