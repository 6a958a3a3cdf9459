package kube

import (
	"context"
	"strings"
	"testing"
	"time"
)

// nextWrite waits for the write of resource name, skipping the others
// (the controllers write all the time).
func nextWrite(t *testing.T, ch <-chan Write, verb, resource, name string) Write {
	t.Helper()
	return waitWrite(t, ch, verb+" of "+resource+" "+name, func(w Write) bool {
		return w.Verb == verb && w.Resource == resource && w.Name == name
	})
}

func waitWrite(t *testing.T, ch <-chan Write, what string, match func(Write) bool) Write {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case w, ok := <-ch:
			if !ok {
				t.Fatal("the writes ended")
			}
			if match(w) {
				return w
			}
		case <-deadline:
			t.Fatalf("no %s within 30s", what)
		}
	}
}

// TestTheWritePathSaysASecretIsEncrypted creates a Secret, which the test
// control plane's encryption config covers: the storage row names the
// provider and key kube-apiserver encrypted it with.
func TestTheWritePathSaysASecretIsEncrypted(t *testing.T) {
	ch, cancel := testCP.Writes().Subscribe(1024)
	defer cancel()
	newKubectl(t, kubectlDispatcher, KubeconfigAdminContext).run("", "create", "secret", "generic", "traced-secret", "--from-literal=a=b")
	w := nextWrite(t, ch, "create", "secrets", "traced-secret")
	if want := `protobuf, encrypted at rest with aescbc key "` + testEncryptionKey + `"`; w.Encoding != want {
		t.Errorf("encoding %q, want %q", w.Encoding, want)
	}
}

func TestTheWritePathComesFromTheServersHooks(t *testing.T) {
	ch, cancel := testCP.Writes().Subscribe(1024)
	defer cancel()
	admin := newKubectl(t, kubectlDispatcher, KubeconfigAdminContext)
	admin.run("", "create", "configmap", "traced", "--from-literal=a=b")
	w := nextWrite(t, ch, "create", "configmaps", "traced")

	t.Run("who, and the authorizer's decision", func(t *testing.T) {
		if w.User != AdminUser || !contains(w.Groups, "system:masters") || w.Authentication != "x509 client certificate" {
			t.Errorf("user %q groups %q authentication %q", w.User, w.Groups, w.Authentication)
		}
		if w.Decision != "allow" {
			t.Errorf("decision %q reason %q, want allow", w.Decision, w.Reason)
		}
	})
	t.Run("every admission plugin that handled it", func(t *testing.T) {
		var plugins []string
		for _, s := range w.Admission {
			plugins = append(plugins, s.Phase+" "+s.Plugin)
			if s.Refusal != "" {
				t.Errorf("%s refused a write that succeeded: %s", s.Plugin, s.Refusal)
			}
		}
		for _, want := range []string{"mutating NamespaceLifecycle", "validating ValidatingAdmissionPolicy", "validating ValidatingAdmissionWebhook", "mutating MutatingAdmissionWebhook"} {
			if !contains(plugins, want) {
				t.Errorf("admission %q: no %q", plugins, want)
			}
		}
	})
	t.Run("where and how it was stored, and the revision", func(t *testing.T) {
		if w.Key != "/registry/configmaps/default/traced" || w.Encoding != "protobuf" || w.Code != 201 {
			t.Errorf("key %q encoding %q code %d", w.Key, w.Encoding, w.Code)
		}
		resp, err := etcdClient(t).Get(context.Background(), w.Key)
		if err != nil || len(resp.Kvs) != 1 {
			t.Fatalf("get %s: %v", w.Key, err)
		}
		if rev := resp.Kvs[0].ModRevision; w.Revision != rev {
			t.Errorf("revision %d, etcd has the key at %d", w.Revision, rev)
		}
	})
	t.Run("a refused write says which stage refused it", func(t *testing.T) { viewerRefused(t, ch) })
	t.Run("a controller's write is allowed by its RBAC binding", func(t *testing.T) {
		admin.run("", "create", "deployment", "traced", "--image=nginx:1.27")
		w := waitWrite(t, ch, "the deployment controller's create of a ReplicaSet", func(w Write) bool {
			return w.Verb == "create" && w.Resource == "replicasets" && strings.HasPrefix(w.Name, "traced-")
		})
		if w.User != "system:serviceaccount:kube-system:deployment-controller" || w.Authentication != "service account token" {
			t.Errorf("user %q authentication %q", w.User, w.Authentication)
		}
		want := `RBAC: allowed by ClusterRoleBinding "system:controller:deployment-controller" of ClusterRole "system:controller:deployment-controller" to ServiceAccount "deployment-controller/kube-system"`
		if w.Decision != "allow" || w.Reason != want {
			t.Errorf("decision %q reason %q, want %q", w.Decision, w.Reason, want)
		}
	})
	t.Run("a generated name is read from the answer", func(t *testing.T) {
		w := waitWrite(t, ch, "the replicaset controller's create of a Pod", func(w Write) bool {
			return w.Verb == "create" && w.Resource == "pods" && strings.HasPrefix(w.Name, "traced-")
		})
		if w.Key != "/registry/pods/default/"+w.Name || w.Encoding != "protobuf" || w.Revision == 0 {
			t.Errorf("pod %q: key %q encoding %q revision %d", w.Name, w.Key, w.Encoding, w.Revision)
		}
	})
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// viewerRefused has the viewer create a ConfigMap, which RBAC refuses: the
// write path says authorization refused it, and why.
func viewerRefused(t *testing.T, ch <-chan Write) {
	viewer := newKubectl(t, kubectlDispatcher, KubeconfigViewerContext)
	if _, _, err := viewer.try("", "create", "configmap", "refused-traced", "--from-literal=a=b"); err == nil {
		t.Fatal("the viewer's create succeeded")
	}
	// Authorization refuses before the body is read: the name is not known.
	w := waitWrite(t, ch, "the viewer's create", func(w Write) bool {
		return w.Verb == "create" && w.Resource == "configmaps" && w.User == ViewerUser
	})
	stage, why := w.Refused()
	if w.Code != 403 || stage != "authorization" || w.Revision != 0 {
		t.Errorf("code %d stage %q why %q revision %d", w.Code, stage, why, w.Revision)
	}
	if !strings.Contains(w.Message, `User "etcdscope-viewer" cannot create resource "configmaps"`) {
		t.Errorf("message %q", w.Message)
	}
	if !strings.Contains(why, "cannot create resource") {
		t.Errorf("why %q", why)
	}
}
