package restore

import (
	"context"
	"errors"
	"math/rand"
	"reflect"
	"strings"
	"testing"

	"github.com/etcdscope/etcdscope/etcdview"
	"github.com/etcdscope/etcdscope/etcdview/etcdviewtest"
	"k8s.io/apimachinery/pkg/api/apitesting/fuzzer"
	"k8s.io/apimachinery/pkg/api/meta"
	metafuzzer "k8s.io/apimachinery/pkg/apis/meta/fuzzer"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"
)

// store is a Source of a few keys at one revision, for the engine's
// reads without an etcd.
type store map[string]etcdview.KV

const storeRev = 100

func (s store) Get(_ context.Context, key string, rev int64) (*etcdview.KV, error) {
	kv, ok := s[key]
	if !ok {
		return nil, etcdview.ErrNotFound
	}
	return &kv, nil
}

func (s store) List(_ context.Context, prefix string, rev int64, _ etcdview.PageToken) (etcdview.Page, error) {
	p := etcdview.Page{Revision: storeRev}
	for k, kv := range s {
		if strings.HasPrefix(k, prefix) {
			p.Keys = append(p.Keys, kv)
		}
	}
	return p, nil
}

func (s store) Children(context.Context, string, int64) (etcdview.Level, error) {
	return etcdview.Level{}, errors.New("not in this store")
}
func (s store) Count(context.Context, string, int64) (int64, error) {
	return 0, errors.New("not in this store")
}
func (s store) History(_ context.Context, key string, _ etcdview.HistoryOptions) (etcdview.History, error) {
	return etcdview.History{Key: key, Revision: storeRev}, nil
}
func (s store) Watch(context.Context, string, etcdview.WatchOptions) <-chan etcdview.Batch {
	return nil
}
func (s store) Status(context.Context) (etcdview.Cluster, error) {
	return etcdview.Cluster{}, errors.New("not in this store")
}

// TestObjectOfEveryKindIsStrippedOfWhatTheServerSets fills an object of
// every kind client-go's scheme knows that kube-apiserver stores with
// random values, writes it as kube-apiserver does, and restores it: the
// manifest holds the object without the fields the server sets, its name,
// labels and user fields as written, and it reads back as YAML; no kind
// makes the engine fail or panic.
func TestObjectOfEveryKindIsStrippedOfWhatTheServerSets(t *testing.T) {
	f := fuzzer.FuzzerFor(metafuzzer.Funcs, rand.NewSource(25), scheme.Codecs).NilChance(0.2).NumElements(0, 2).MaxDepth(6)
	restored := 0
	for gvk, typ := range scheme.Scheme.AllKnownTypes() {
		if gvk.Version == runtime.APIVersionInternal || strings.HasSuffix(gvk.Kind, "List") {
			continue
		}
		obj, ok := reflect.New(typ).Interface().(runtime.Object)
		if !ok {
			continue
		}
		if _, err := meta.Accessor(obj); err != nil {
			continue // an options or review kind: no metadata, never stored
		}
		f.Fill(obj)
		m, _ := meta.Accessor(obj)
		m.SetName("restored")
		m.SetNamespace("app")
		m.SetOwnerReferences(nil)
		key, err := etcdviewtest.Key(obj)
		if err != nil {
			continue // not a stored resource
		}
		value, err := etcdviewtest.Encode(obj)
		if err != nil {
			t.Errorf("%s: encode: %v", gvk, err)
			continue
		}
		src := store{key: {Key: key, Value: value, ModRevision: 42, CreateRevision: 41, Version: 2}}
		man, err := Object(context.Background(), src, key, 0, Options{ShowSecrets: true})
		if err != nil {
			t.Errorf("%s: %v", gvk, err)
			continue
		}
		if len(man.LeftOut) > 0 {
			t.Logf("%s left out: %s", gvk, man.LeftOut[0].Why)
			continue
		}
		var got map[string]any
		if err := yaml.Unmarshal(man.YAML, &got); err != nil {
			t.Errorf("%s: the manifest is not YAML: %v\n%s", gvk, err, man.YAML)
			continue
		}
		restored++
		md, _ := got["metadata"].(map[string]any)
		for _, f := range serverSet {
			if _, ok := md[f]; ok {
				t.Errorf("%s: metadata.%s is still there", gvk, f)
			}
		}
		if _, ok := got["status"]; ok {
			t.Errorf("%s: status is still there", gvk)
		}
		labels := m.GetLabels()
		if gvk.Kind == "Namespace" {
			if labels == nil {
				labels = map[string]string{}
			}
			labels["kubernetes.io/metadata.name"] = "restored" // the API server's defaulting
		}
		if md["name"] != "restored" || (len(labels) > 0 && !reflect.DeepEqual(stringMap(md["labels"]), labels)) {
			t.Errorf("%s: name %v labels %v, want restored %v", gvk, md["name"], md["labels"], m.GetLabels())
		}
		if got["kind"] == "" || got["apiVersion"] == "" {
			t.Errorf("%s: no kind or apiVersion:\n%s", gvk, man.YAML)
		}
	}
	if restored < 50 {
		t.Errorf("restored %d kinds, want every stored one of the scheme (more than 50)", restored)
	}
}

func stringMap(v any) map[string]string {
	m, _ := v.(map[string]any)
	out := map[string]string{}
	for k, v := range m {
		out[k], _ = v.(string)
	}
	return out
}
