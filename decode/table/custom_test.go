package table

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/etcdscope/etcdscope/decode"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// gadgetDefinition is a namespaced CRD as decoded from etcd: v1 stores,
// v2 is served (conversion None). Both have defaults at several depths
// (a default object whose own fields default, a nested field, the items
// of a list); v2's differ from v1's, and only v2 has selectable fields.
func gadgetDefinition(t testing.TB) runtime.Object {
	t.Helper()
	schema := func(color string) string {
		return `{"type":"object","properties":{"spec":{"type":"object","default":{},"properties":{
 "color":{"type":"string","default":"` + color + `"},"size":{"type":"integer","default":3},"enabled":{"type":"boolean","default":true},
 "owner":{"type":"string"},"nullable":{"type":"string"},
 "limits":{"type":"object","default":{},"properties":{"cpu":{"type":"string","default":"500m"},"memory":{"type":"string"}}},
 "ports":{"type":"array","items":{"type":"object","properties":{"name":{"type":"string"},"protocol":{"type":"string","default":"TCP"}}}}}}}}`
	}
	o := decode.Decoder{JSONOnly: true}.DecodeAt("/registry/apiextensions.k8s.io/customresourcedefinitions/gadgets.example.com", []byte(`{
"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"gadgets.example.com"},
"spec":{"group":"example.com","scope":"Namespaced","names":{"plural":"gadgets","singular":"gadget","kind":"Gadget"},
"versions":[
 {"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":`+schema("blue")+`}},
 {"name":"v2","served":true,"storage":false,"schema":{"openAPIV3Schema":`+schema("green")+`},
  "selectableFields":[{"jsonPath":".spec.color"},{"jsonPath":".spec.size"},{"jsonPath":".spec.enabled"},{"jsonPath":".spec.owner"}]}]}}`), 2)
	if o.Object == nil {
		t.Fatal(o.Label())
	}
	return o.Object
}

func gadgets(t testing.TB) *Resource {
	t.Helper()
	r, err := Custom(gadgetDefinition(t))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// gadget is a Gadget as decoded from its etcd value.
func gadget(t *testing.T, version, name, spec string) runtime.Object {
	t.Helper()
	value := `{"apiVersion":"example.com/` + version + `","kind":"Gadget","metadata":{"name":"` + name + `","namespace":"shop"}`
	if spec != "" {
		value += `,"spec":` + spec
	}
	o := decode.Decoder{JSONOnly: true}.DecodeAt("/registry/example.com/gadgets/shop/"+name, []byte(value+"}"), 7)
	if o.Object == nil {
		t.Fatal(o.Label())
	}
	return o.Object
}

// TestCustomResourcesAreDefaultedOnRead: what etcd holds is pruned and
// defaulted by the stored version's schema, then served as v2, as
// kube-apiserver's storage codec reads it.
func TestCustomResourcesAreDefaultedOnRead(t *testing.T) {
	r := gadgets(t)
	for _, tc := range []struct {
		name, version, spec, want string
	}{
		{"bare", "v1", "",
			`{"color":"blue","enabled":true,"limits":{"cpu":"500m"},"size":3}`},
		{"nested", "v1", `{"size":5,"limits":{"memory":"1Gi"},"ports":[{"name":"http"},{"name":"dns","protocol":"UDP"}]}`,
			`{"color":"blue","enabled":true,"limits":{"cpu":"500m","memory":"1Gi"},"ports":[{"name":"http","protocol":"TCP"},{"name":"dns","protocol":"UDP"}],"size":5}`},
		// Fields the schema no longer has are pruned on read too, and a
		// null where the schema allows none.
		{"pruned", "v1", `{"color":"red","legacy":"x","limits":{"cpu":"1","gpu":2},"nullable":null}`,
			`{"color":"red","enabled":true,"limits":{"cpu":"1"},"size":3}`},
		// Stored as v2: v2's defaults.
		{"stored-v2", "v2", `{"enabled":false}`,
			`{"color":"green","enabled":false,"limits":{"cpu":"500m"},"size":3}`},
	} {
		o, err := r.Object(gadget(t, tc.version, tc.name, tc.spec), 7)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		served, err := o.Served()
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		u := served.(*unstructured.Unstructured)
		spec, _ := json.Marshal(u.Object["spec"])
		if string(spec) != tc.want || u.GetAPIVersion() != "example.com/v2" {
			t.Errorf("%s: served %s spec %s, want example.com/v2 %s", tc.name, u.GetAPIVersion(), spec, tc.want)
		}
		if u.GetGeneration() != 1 {
			t.Errorf("%s: generation %d, want 1: the storage codec repairs a missing one", tc.name, u.GetGeneration())
		}
	}
}

// TestSelectableFieldsSelectAsTheServerDoes: --field-selector takes the
// served version's selectable fields, compared in their string form, an
// absent one as "", and refuses any other field with kube-apiserver's
// words.
func TestSelectableFieldsSelectAsTheServerDoes(t *testing.T) {
	r := gadgets(t)
	objs := map[string]string{
		"defaulted": "",
		"red":       `{"color":"red","size":12,"enabled":false,"owner":"ops"}`,
	}
	for _, tc := range []struct {
		fields string
		want   string // the names selected, in order
	}{
		{"spec.color=blue", "defaulted"},
		{"spec.color!=blue", "red"},
		{"spec.size=12", "red"},
		{"spec.size=3,spec.enabled=true", "defaulted"},
		{"spec.enabled=false", "red"},
		{"spec.owner=", "defaulted"},
		{"spec.owner=ops,metadata.namespace=shop,metadata.name=red", "red"},
	} {
		sel, err := r.Selector("", tc.fields)
		if err != nil {
			t.Fatalf("--field-selector %s: %v", tc.fields, err)
		}
		var got []string
		for _, name := range []string{"defaulted", "red"} {
			o, err := r.Object(gadget(t, "v1", name, objs[name]), 7)
			if err != nil {
				t.Fatal(err)
			}
			if ok, err := sel.Matches(o); err != nil {
				t.Fatalf("--field-selector %s on %s: %v", tc.fields, name, err)
			} else if ok {
				got = append(got, name)
			}
		}
		if strings.Join(got, ",") != tc.want {
			t.Errorf("--field-selector %s selects %q, want %q", tc.fields, got, tc.want)
		}
	}
	for _, tc := range []struct {
		r      *Resource
		fields string
		want   string
	}{
		{r, "spec.bogus=1", "field label not supported: spec.bogus"},
		{r, "spec.limits.cpu=1", "field label not supported: spec.limits.cpu"},
		// The widgets are cluster-scoped: no metadata.namespace.
		{widgets(t), "metadata.namespace=shop", "field label not supported: metadata.namespace"},
	} {
		if _, err := tc.r.Selector("", tc.fields); err == nil || !strings.HasSuffix(err.Error(), ": "+tc.want) {
			t.Errorf("--field-selector %s: %v, want it to end %q", tc.fields, err, tc.want)
		}
	}
}

func widgets(t *testing.T) *Resource {
	t.Helper()
	r, err := Custom(customDefinition(t, `{"strategy":"None"}`))
	if err != nil {
		t.Fatal(err)
	}
	return r
}
