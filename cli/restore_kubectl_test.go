package cli

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"sigs.k8s.io/yaml"
)

// restoredKinds are the kinds of what a user wrote in restore-e2e (see
// testdata/restore/app.yaml), as kubectl get names them.
const restoredKinds = "serviceaccounts,roles,rolebindings,configmaps,secrets,services,deployments,statefulsets,daemonsets,jobs,persistentvolumeclaims,backups"

// TestRestoreBringsBackADeletedNamespace applies an application of many
// kinds with the real kubectl on the bundled control plane, deletes its
// namespace until the namespace controller has finalized it, and pipes
// `restore --namespace --rev R --show-secrets` into `kubectl apply -f -`:
// every object the user wrote comes back with its data, as kubectl get
// shows it (what the server sets aside), and what the controllers make
// again is left out with why. Then, on the same cluster: Secrets left out
// without --show-secrets, one deleted object restored by RESOURCE NAME,
// and a compacted revision refused with the oldest one that can be.
func TestRestoreBringsBackADeletedNamespace(t *testing.T) {
	t.Parallel()
	k := newKubectl(t)
	p := startServe(t, "--apiserver", "--members", "1")
	k.kubeconfig = exportVar(t, p.export, "KUBECONFIG")
	ep := p.conn()
	k.run(t, "apply", "-f", "testdata/restore/crd.yaml")
	k.run(t, "wait", "--for", "condition=established", "--timeout", "60s", "crd/backups.restore.etcdscope.io")
	k.run(t, "apply", "-f", "testdata/restore/namespace.yaml")
	for _, made := range []string{"serviceaccount/default", "configmap/kube-root-ca.crt"} {
		k.run(t, "wait", "--for", "create", "--timeout", "60s", "-n", "restore-e2e", made)
	}
	k.run(t, "apply", "-f", "testdata/restore/app.yaml")
	// What the controllers make, which the restore must leave out.
	for _, made := range []string{"pod/db-0", "persistentvolumeclaim/data-db-0"} {
		k.run(t, "wait", "--for", "create", "--timeout", "60s", "-n", "restore-e2e", made)
	}
	k.made(t, "controllerrevisions", "endpointslices")
	k.run(t, "wait", "--for", "jsonpath={.status.replicas}=2", "--timeout", "60s", "-n", "restore-e2e", "deployment/web")
	k.run(t, "wait", "--for", "jsonpath={.status.active}=1", "--timeout", "60s", "-n", "restore-e2e", "job/migrate")
	before := userObjects(t, k)

	k.run(t, "delete", "namespace", "restore-e2e", "--wait", "--timeout", "120s")
	k.run(t, "wait", "--for", "delete", "--timeout", "120s", "namespace/restore-e2e")
	// Without --rev the namespace is gone: the error names the revision
	// to restore it from.
	code, _, errOut := runCommand(t, append([]string{"restore", "--namespace", "restore-e2e"}, ep...)...)
	m := regexp.MustCompile(`restore it with --rev (\d+)\n$`).FindStringSubmatch(errOut)
	if code != 1 || m == nil {
		t.Fatalf("restore of the deleted namespace at the newest revision: exit %d, %q, want exit 1 and the revision to restore from", code, errOut)
	}
	rev := m[1]

	t.Run("namespace", func(t *testing.T) {
		code, manifest, notes := runCommand(t, append([]string{"restore", "--namespace", "restore-e2e", "--rev", rev, "--show-secrets"}, ep...)...)
		if code != 0 {
			t.Fatalf("restore: exit %d\n%s", code, notes)
		}
		t.Logf("restore --namespace restore-e2e --rev %s --show-secrets: stderr\n%s\nthe manifest's kinds and names:\n%s", rev, notes, kindsAndNames(manifest))
		for _, want := range []string{
			"left out Pod restore-e2e/db-0: a Pod of StatefulSet db",
			"left out PersistentVolumeClaim restore-e2e/data-db-0: a PersistentVolumeClaim of StatefulSet db",
			"left out ReplicaSet restore-e2e/web-", "left out Pod restore-e2e/migrate-",
			"left out ControllerRevision restore-e2e/db-", "left out EndpointSlice restore-e2e/web-",
			"left out ServiceAccount restore-e2e/default:", "left out ConfigMap restore-e2e/kube-root-ca.crt:",
			"dropped from Service restore-e2e/web: spec.clusterIP",
		} {
			if !strings.Contains(notes, "\n"+want) {
				t.Errorf("stderr does not say %q:\n%s", want, notes)
			}
		}
		k.apply(t, manifest)
		after := userObjects(t, k)
		for name, want := range before {
			if got, ok := after[name]; !ok {
				t.Errorf("%s is not back", name)
			} else if got != want {
				t.Errorf("%s came back as\n%s\nwant\n%s", name, got, want)
			}
		}
		for name := range after {
			if _, ok := before[name]; !ok {
				t.Errorf("%s was not there before", name)
			}
		}
	})

	t.Run("secrets left out without --show-secrets", func(t *testing.T) {
		code, manifest, notes := runCommand(t, append([]string{"restore", "--namespace", "restore-e2e", "--rev", rev, "-o", "json"}, ep...)...)
		if code != 0 {
			t.Fatalf("restore: exit %d\n%s", code, notes)
		}
		for _, want := range []string{"left out Secret restore-e2e/db-credentials: a Secret: give --show-secrets", "left out Secret restore-e2e/web-tls:"} {
			if !strings.Contains(notes, want) {
				t.Errorf("stderr does not say %q:\n%s", want, notes)
			}
		}
		for _, v := range []string{"s3cret-Restore-91", base64.StdEncoding.EncodeToString([]byte("s3cret-Restore-91")), "c2VjcmV0LWtleS1ieXRlcw==", `"Secret"`} {
			if strings.Contains(manifest, v) {
				t.Errorf("the manifest holds %q:\n%s", v, manifest)
			}
		}
		if !strings.Contains(manifest, `"kind": "ConfigMap"`) {
			t.Errorf("the manifest lost the rest:\n%s", manifest)
		}
	})

	t.Run("one object by resource name", func(t *testing.T) {
		want := before["ConfigMap/settings"]
		k.run(t, "delete", "configmap", "settings", "-n", "restore-e2e")
		code, manifest, notes := runCommand(t, append([]string{"restore", "configmap", "settings", "-n", "restore-e2e"}, ep...)...)
		if code != 0 || !strings.HasPrefix(notes, "restored 1 object as of revision ") {
			t.Fatalf("restore: exit %d\n%s", code, notes)
		}
		k.apply(t, manifest)
		if got := userObjects(t, k)["ConfigMap/settings"]; got != want {
			t.Errorf("the ConfigMap came back as\n%s\nwant\n%s", got, want)
		}
	})

	t.Run("compacted revision", func(t *testing.T) {
		head := compactBundled(t, p.export)
		msg := runFails(t, append([]string{"restore", "--namespace", "restore-e2e", "--rev", rev}, ep...)...)
		want := "revision " + rev + " has been compacted: the oldest revision etcd still holds is " + strconv.FormatInt(head, 10)
		if !strings.Contains(msg, want) {
			t.Errorf("restore at a compacted revision: %q, want %q", msg, want)
		}
	})
}

// made waits until restore-e2e holds objects of each resource, which the
// controllers name with a hash kubectl wait cannot wait for.
func (k *kubectl) made(t *testing.T, resources ...string) {
	t.Helper()
	for _, r := range resources {
		for deadline := time.Now().Add(time.Minute); ; {
			if out, _, code := k.output(t, "get", r, "-n", "restore-e2e", "-o", "name"); code == 0 && out != "" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("no %s in restore-e2e after a minute", r)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
}

// apply pipes manifest into kubectl apply -f -.
func (k *kubectl) apply(t *testing.T, manifest string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, k.path, "--kubeconfig", k.kubeconfig, "--cache-dir", k.home, "apply", "-f", "-")
	cmd.Env = append(os.Environ(), "HOME="+k.home)
	cmd.Stdin = strings.NewReader(manifest)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("kubectl apply -f -: %v\n%s\nof\n%s", err, out, manifest)
	}
}

// userObjects are the objects of restoredKinds in restore-e2e that a user
// wrote, by Kind/name, as kubectl get -o json shows them without what the
// server sets or allocates and the controllers make (the cluster IP, a
// Job's generated selector and its uid labels, the annotation kubectl
// apply writes), as JSON.
func userObjects(t *testing.T, k *kubectl) map[string]string {
	t.Helper()
	var list struct{ Items []map[string]any }
	var ns map[string]any
	if err := json.Unmarshal([]byte(k.run(t, "get", "-n", "restore-e2e", restoredKinds, "-o", "json")), &list); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(k.run(t, "get", "namespace", "restore-e2e", "-o", "json")), &ns); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, o := range append(list.Items, ns) {
		md, _ := o["metadata"].(map[string]any)
		name, _ := md["name"].(string)
		kind, _ := o["kind"].(string)
		if name == "default" || name == "kube-root-ca.crt" || name == "data-db-0" {
			continue // the controllers', not the user's
		}
		for _, f := range []string{"resourceVersion", "uid", "creationTimestamp", "generation", "managedFields"} {
			delete(md, f)
		}
		if ann, _ := md["annotations"].(map[string]any); ann != nil {
			delete(ann, "kubectl.kubernetes.io/last-applied-configuration")
			delete(ann, "deployment.kubernetes.io/revision")
			if len(ann) == 0 {
				delete(md, "annotations")
			}
		}
		delete(o, "status")
		spec, _ := o["spec"].(map[string]any)
		switch kind {
		case "Service":
			if spec["clusterIP"] != "None" {
				delete(spec, "clusterIP")
				delete(spec, "clusterIPs")
			}
		case "Job":
			delete(spec, "selector")
			tmd, _ := spec["template"].(map[string]any)["metadata"].(map[string]any)
			delete(tmd, "labels")
		case "PersistentVolumeClaim":
			delete(spec, "volumeName")
		}
		js, err := json.MarshalIndent(o, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		out[kind+"/"+name] = string(js)
	}
	if len(out) < 16 {
		t.Fatalf("restore-e2e holds %d of the objects namespace.yaml and app.yaml write, want 16: %q", len(out), slices.Sorted(maps.Keys(out)))
	}
	return out
}

// compactBundled compacts the bundled etcd of serve's export line to its
// newest revision, which it returns.
func compactBundled(t *testing.T, export string) int64 {
	t.Helper()
	tlsInfo := transport.TLSInfo{TrustedCAFile: exportVar(t, export, "ETCDCTL_CACERT"),
		CertFile: exportVar(t, export, "ETCDCTL_CERT"), KeyFile: exportVar(t, export, "ETCDCTL_KEY")}
	tlsConfig, err := tlsInfo.ClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{exportVar(t, export, "ETCDCTL_ENDPOINTS")}, TLS: tlsConfig, DialTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	resp, err := c.Get(t.Context(), "compact-probe")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Compact(t.Context(), resp.Header.Revision, clientv3.WithCompactPhysical()); err != nil {
		t.Fatal(err)
	}
	return resp.Header.Revision
}

// kindsAndNames lists the objects of a restored List, a line each, for
// the test's log.
func kindsAndNames(manifest string) string {
	var list struct {
		Items []struct {
			Kind     string
			Metadata struct{ Name string }
		}
	}
	if err := yaml.Unmarshal([]byte(manifest), &list); err != nil {
		return err.Error()
	}
	var b strings.Builder
	for _, it := range list.Items {
		b.WriteString(it.Kind + " " + it.Metadata.Name + "\n")
	}
	return b.String()
}
