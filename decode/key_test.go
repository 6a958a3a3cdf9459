package decode

import (
	"strings"
	"testing"
)

func TestParseKeyFollowsTheAPIServerLayout(t *testing.T) {
	tests := []struct {
		name, key string
		want      Key
	}{
		{"namespaced pod", "/registry/pods/default/web-0",
			Key{StoragePrefix: "pods", Resource: "pods", Namespace: "default", Name: "web-0", IsObject: true}},
		{"nodes are minions", "/registry/minions/node-1",
			Key{StoragePrefix: "minions", Resource: "nodes", Name: "node-1", IsObject: true}},
		{"services under services/specs", "/registry/services/specs/default/kubernetes",
			Key{StoragePrefix: "services/specs", Resource: "services", Namespace: "default", Name: "kubernetes", IsObject: true}},
		{"endpoints under services/endpoints", "/registry/services/endpoints/default/kubernetes",
			Key{StoragePrefix: "services/endpoints", Resource: "endpoints", Namespace: "default", Name: "kubernetes", IsObject: true}},
		{"replication controllers are controllers", "/registry/controllers/default/rc1",
			Key{StoragePrefix: "controllers", Resource: "replicationcontrollers", Namespace: "default", Name: "rc1", IsObject: true}},
		{"ingresses under ingress", "/registry/ingress/default/web",
			Key{StoragePrefix: "ingress", Group: "networking.k8s.io", Resource: "ingresses", Namespace: "default", Name: "web", IsObject: true}},
		{"deployments in apps", "/registry/deployments/kube-system/coredns",
			Key{StoragePrefix: "deployments", Group: "apps", Resource: "deployments", Namespace: "kube-system", Name: "coredns", IsObject: true}},
		{"cluster-scoped clusterrole", "/registry/clusterroles/system:aggregate-to-edit",
			Key{StoragePrefix: "clusterroles", Group: "rbac.authorization.k8s.io", Resource: "clusterroles", Name: "system:aggregate-to-edit", IsObject: true}},
		{"master lease", "/registry/masterleases/10.0.0.1",
			Key{StoragePrefix: "masterleases", Resource: "masterleases", Name: "10.0.0.1", IsObject: true,
				Note: "API server IP lease (Endpoints with an etcd lease), key is the server's IP"}},
		{"service IP range is one object", "/registry/ranges/serviceips",
			Key{StoragePrefix: "ranges/serviceips", Resource: "serviceipallocations", IsObject: true, Note: "service ClusterIP allocation bitmap"}},
		{"node port range is one object", "/registry/ranges/servicenodeports",
			Key{StoragePrefix: "ranges/servicenodeports", Resource: "servicenodeportallocations", IsObject: true, Note: "service NodePort allocation bitmap"}},
		{"CRD", "/registry/apiextensions.k8s.io/customresourcedefinitions/crontabs.stable.example.com",
			Key{StoragePrefix: "apiextensions.k8s.io/customresourcedefinitions", Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions", Name: "crontabs.stable.example.com", IsObject: true}},
		{"APIService", "/registry/apiregistration.k8s.io/apiservices/v1.apps",
			Key{StoragePrefix: "apiregistration.k8s.io/apiservices", Group: "apiregistration.k8s.io", Resource: "apiservices", Name: "v1.apps", IsObject: true}},
		{"namespaced custom resource", "/registry/stable.example.com/crontabs/default/my-cron",
			Key{StoragePrefix: "stable.example.com/crontabs", Group: "stable.example.com", Resource: "crontabs", Namespace: "default", Name: "my-cron", IsObject: true}},
		{"cluster-scoped custom resource", "/registry/example.com/widgets/w1",
			Key{StoragePrefix: "example.com/widgets", Group: "example.com", Resource: "widgets", Name: "w1", IsObject: true}},
		{"unknown resource by segment count", "/registry/frobs/ns/f",
			Key{StoragePrefix: "frobs", Resource: "frobs", Namespace: "ns", Name: "f", IsObject: true}},
		{"namespace directory is not an object", "/registry/pods/default",
			Key{StoragePrefix: "pods", Resource: "pods", Namespace: "default", Note: "a directory of pods, not an object"}},
		{"compaction marker", "compact_rev_key",
			Key{Note: "API server compaction marker (last compacted revision)"}},
		{"outside the prefix", "/other/thing",
			Key{Note: "outside /registry"}},
		{"too many segments", "/registry/pods/a/b/c",
			Key{StoragePrefix: "pods", Resource: "pods", Note: "not laid out as pods keys are"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ParseKey(tt.key)
			tt.want.Raw = tt.key
			if strings.HasPrefix(tt.key, DefaultPrefix+"/") {
				tt.want.Prefix = DefaultPrefix
			}
			if got != tt.want {
				t.Errorf("ParseKey(%q)\n got %+v\nwant %+v", tt.key, got, tt.want)
			}
		})
	}
}

func TestKeyParserHonoursOtherPrefixes(t *testing.T) {
	p := KeyParser{Prefixes: []string{"/kubernetes.io", "/openshift.io/"}}
	tests := []struct {
		key, prefix, resource, name string
	}{
		{"/kubernetes.io/pods/ns/p", "/kubernetes.io", "pods", "p"},
		{"/openshift.io/routes/ns/r", "/openshift.io", "routes", "r"},
	}
	for _, tt := range tests {
		got := p.Parse(tt.key)
		if got.Prefix != tt.prefix || got.Resource != tt.resource || got.Name != tt.name || !got.IsObject {
			t.Errorf("Parse(%q) = %+v", tt.key, got)
		}
	}
	if got := p.Parse("/registry/pods/ns/p"); got.IsObject || got.Note != "outside /kubernetes.io, /openshift.io/" {
		t.Errorf("a /registry key under other prefixes = %+v, want outside", got)
	}
}

func TestKeysShowEscapedNeverMangled(t *testing.T) {
	tests := []struct{ key, want string }{
		{"/registry/pods/default/web-0", "/registry/pods/default/web-0"},
		{"/registry/pods/défault/wéb", "/registry/pods/défault/wéb"},
		{"/registry/\xff\xfe/x", `"/registry/\xff\xfe/x"`},
		{"/registry/a\x00b\n", `"/registry/a\x00b\n"`},
	}
	for _, tt := range tests {
		if got := ParseKey(tt.key).String(); got != tt.want {
			t.Errorf("String(%q) = %s, want %s", tt.key, got, tt.want)
		}
	}
}
