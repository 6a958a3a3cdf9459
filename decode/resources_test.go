package decode

import "testing"

func TestLookupResourceResolvesKubectlNames(t *testing.T) {
	tests := []struct {
		name, group, resource, prefix string
		namespaced                    bool
	}{
		{"po", "", "pods", "pods", true},
		{"pod", "", "pods", "pods", true},
		{"Pod", "", "pods", "pods", true},
		{"deploy", "apps", "deployments", "deployments", true},
		{"deployments.apps", "apps", "deployments", "deployments", true},
		{"svc", "", "services", "services/specs", true},
		{"ep", "", "endpoints", "services/endpoints", true},
		{"cm", "", "configmaps", "configmaps", true},
		{"no", "", "nodes", "minions", false},
		{"rc", "", "replicationcontrollers", "controllers", true},
		{"ing", "networking.k8s.io", "ingresses", "ingress", true},
		{"events", "", "events", "events", true},
		{"events.events.k8s.io", "events.k8s.io", "events", "events", true},
		{"ns", "", "namespaces", "namespaces", false},
		{"clusterroles", "rbac.authorization.k8s.io", "clusterroles", "clusterroles", false},
		{"leases", "coordination.k8s.io", "leases", "leases", true},
		{"crd", "apiextensions.k8s.io", "customresourcedefinitions", "apiextensions.k8s.io/customresourcedefinitions", false},
		{"apiservices", "apiregistration.k8s.io", "apiservices", "apiregistration.k8s.io/apiservices", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, ok := LookupResource(tt.name)
			if !ok {
				t.Fatalf("LookupResource(%q) not found", tt.name)
			}
			if r.Group != tt.group || r.Resource != tt.resource || r.StoragePrefix != tt.prefix || r.Namespaced != tt.namespaced {
				t.Errorf("LookupResource(%q) = %+v", tt.name, r)
			}
		})
	}
	if r, ok := LookupResource("nosuchthing"); ok {
		t.Errorf("LookupResource(nosuchthing) = %+v, want not found", r)
	}
}

func TestKeyPrefixListsOneResource(t *testing.T) {
	tests := []struct{ name, namespace, want string }{
		{"pods", "", "/registry/pods/"},
		{"pods", "kube-system", "/registry/pods/kube-system/"},
		{"svc", "default", "/registry/services/specs/default/"},
		{"nodes", "ignored", "/registry/minions/"},
	}
	for _, tt := range tests {
		r, _ := LookupResource(tt.name)
		if got := r.KeyPrefix("", tt.namespace); got != tt.want {
			t.Errorf("%s in %q: KeyPrefix = %q, want %q", tt.name, tt.namespace, got, tt.want)
		}
	}
}

// Every storage prefix must lead back to exactly one resource, or ParseKey
// would name the wrong group; a new collision in client-go's scheme needs a
// storageGroups entry (kube-apiserver's AddCohabitatingResources).
func TestEveryStoragePrefixHasOneStorageGroup(t *testing.T) {
	groups := map[string]map[string]bool{}
	for _, r := range Resources() {
		if groups[r.StoragePrefix] == nil {
			groups[r.StoragePrefix] = map[string]bool{}
		}
		groups[r.StoragePrefix][r.Group] = true
	}
	for prefix, gs := range groups {
		if len(gs) < 2 {
			continue
		}
		k := ParseKey("/registry/" + prefix + "/ns/name")
		if !gs[k.Group] || storageGroups[k.Resource] != k.Group {
			t.Errorf("storage prefix %q is shared by groups %v without a storage group (ParseKey gives %q)", prefix, gs, k.Group)
		}
	}
	if n := len(Resources()); n < 60 {
		t.Errorf("only %d resources derived from client-go's typed clients, want every built-in one", n)
	}
}
