package get

import (
	"testing"

	"github.com/etcdscope/etcdscope/ui/uitest"
)

// TestGetSaysWhenOnlyAWebhookCouldConvert: objects stored in a version a
// conversion webhook would convert to the served one are listed as
// stored, and get says so once on stderr; under strategy None they are
// served converted, and nothing is said.
func TestGetSaysWhenOnlyAWebhookCouldConvert(t *testing.T) {
	for _, tc := range []struct {
		conversion string
		warning    string
	}{
		{`{"strategy":"None"}`, ""},
		{`{"strategy":"Webhook","webhook":{"conversionReviewVersions":["v1"],"clientConfig":{"url":"https://conv.example.com"}}}`,
			"Warning: 2 gizmos.example.com shown as stored, in example.com/v1beta1 (or another stored version), not as served in example.com/v1: " +
				"the CustomResourceDefinition converts versions with a webhook, which etcdscope does not call\n"},
	} {
		src := uitest.New()
		src.Put("/registry/apiextensions.k8s.io/customresourcedefinitions/gizmos.example.com", []byte(`{
"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"gizmos.example.com"},
"spec":{"group":"example.com","scope":"Namespaced","names":{"plural":"gizmos","singular":"gizmo","kind":"Gizmo"},"conversion":`+tc.conversion+`,
"versions":[
 {"name":"v1beta1","served":true,"storage":false,"schema":{"openAPIV3Schema":{"type":"object","properties":{"spec":{"type":"object","properties":{"size":{"type":"integer","default":1}}}}}}},
 {"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","properties":{"spec":{"type":"object","properties":{"size":{"type":"integer","default":2}}}}}}}]},
"status":{"acceptedNames":{"plural":"gizmos","singular":"gizmo","kind":"Gizmo"}}}`))
		for _, name := range []string{"a", "b"} {
			src.Put("/registry/example.com/gizmos/shop/"+name, []byte(`{"apiVersion":"example.com/v1beta1","kind":"Gizmo","metadata":{"name":"`+name+`","namespace":"shop"},"spec":{}}`))
		}
		src.Put("/registry/example.com/gizmos/shop/c", []byte(`{"apiVersion":"example.com/v1","kind":"Gizmo","metadata":{"name":"c","namespace":"shop"},"spec":{}}`))
		out, errOut, err := getOn(t, src, false, []string{"gizmos"}, "-n", "shop", "-o", `jsonpath={range .items[*]}{.apiVersion} {.spec.size}{"\n"}{end}`)
		// Defaults are the stored version's: the storage codec defaults
		// before it converts.
		want := "example.com/v1 1\nexample.com/v1 1\nexample.com/v1 2\n"
		if tc.warning != "" {
			want = "example.com/v1beta1 1\nexample.com/v1beta1 1\nexample.com/v1 2\n"
		}
		if err != nil || out != want || errOut != tc.warning {
			t.Errorf("conversion %s: %v\n%s\nstderr %q\nwant\n%s\nstderr %q", tc.conversion, err, out, errOut, want, tc.warning)
		}
	}
}
