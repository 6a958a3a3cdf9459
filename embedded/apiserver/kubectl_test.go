package apiserver

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// kubectlBinary is the dispatcher that picks the kubectl matching the
// server's /version (1.32 for a 1.37 server).
const kubectlBinary = "/usr/bin/kubectl"

// kubectl runs the real kubectl against a server, each test with its own
// kubeconfig and cache directory, never ~/.kube.
type kubectl struct {
	t          *testing.T
	bin        string
	kubeconfig string
	cacheDir   string
}

func newKubectl(t *testing.T, s *Server, bin string) *kubectl {
	t.Helper()
	if _, err := os.Stat(bin); err != nil {
		if os.Getenv("ETCDSCOPE_REQUIRE_KUBECTL") == "1" {
			t.Fatalf("kubectl required (ETCDSCOPE_REQUIRE_KUBECTL=1) but %s: %v", bin, err)
		}
		t.Skipf("no kubectl at %s", bin)
	}
	dir := t.TempDir()
	k := &kubectl{t: t, bin: bin, kubeconfig: filepath.Join(dir, "kubeconfig"), cacheDir: filepath.Join(dir, "cache")}
	if err := s.WriteKubeconfig(k.kubeconfig); err != nil {
		t.Fatal(err)
	}
	return k
}

func (k *kubectl) command(ctx context.Context, stdin string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, k.bin, append([]string{"--kubeconfig", k.kubeconfig, "--cache-dir", k.cacheDir}, args...)...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+k.kubeconfig, "HOME="+filepath.Dir(k.kubeconfig))
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	return cmd
}

// run runs kubectl and returns stdout, failing the test on a non-zero exit.
func (k *kubectl) run(stdin string, args ...string) string {
	k.t.Helper()
	out, errOut, err := k.try(stdin, args...)
	if err != nil {
		k.t.Fatalf("kubectl %s: %v\nstdout: %s\nstderr: %s", strings.Join(args, " "), err, out, errOut)
	}
	return out
}

// try runs kubectl with a deadline and returns stdout, stderr and the error.
func (k *kubectl) try(stdin string, args ...string) (string, string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := k.command(ctx, stdin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return stdout.String(), stderr.String(), err
}

const manifest = `apiVersion: v1
kind: Namespace
metadata:
  name: kc
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: kc
  labels: {app: web}
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: nginx:1.27
        ports:
        - containerPort: 80
---
apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: kc
spec:
  selector: {app: web}
  ports:
  - port: 80
    targetPort: 80
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: kc
data:
  mode: blue
---
apiVersion: v1
kind: Secret
metadata:
  name: creds
  namespace: kc
stringData:
  password: hunter2
`

func TestKubectlConformance(t *testing.T) {
	k := newKubectl(t, testServer, kubectlBinary)

	out := k.run(manifest, "apply", "-f", "-")
	for _, want := range []string{"namespace/kc created", "deployment.apps/web created", "service/web created", "configmap/settings created", "secret/creds created"} {
		if !strings.Contains(out, want) {
			t.Errorf("first apply: no %q in\n%s", want, out)
		}
	}
	edited := strings.NewReplacer("mode: blue", "mode: green", "image: nginx:1.27", "image: nginx:1.28").Replace(manifest)
	out = k.run(edited, "apply", "-f", "-")
	for _, want := range []string{"namespace/kc unchanged", "deployment.apps/web configured", "configmap/settings configured", "service/web unchanged"} {
		if !strings.Contains(out, want) {
			t.Errorf("second apply: no %q in\n%s", want, out)
		}
	}
	if got := k.run("", "get", "configmap", "settings", "-n", "kc", "-o", "jsonpath={.data.mode}"); got != "green" {
		t.Errorf("configmap after re-apply: mode %q, want green", got)
	}
	if got := k.run("", "get", "deployment", "web", "-n", "kc", "-o", "jsonpath={.spec.template.spec.containers[0].image}"); got != "nginx:1.28" {
		t.Errorf("deployment image after re-apply: %q", got)
	}

	t.Run("get shows kube-apiserver's table columns", func(t *testing.T) {
		seedTableObjects(t, "kc")
		for _, tc := range []struct {
			resource string
			header   string
		}{
			{"deployments", "NAME READY UP-TO-DATE AVAILABLE AGE"},
			{"replicasets", "NAME DESIRED CURRENT READY AGE"},
			{"pods", "NAME READY STATUS RESTARTS AGE"},
			{"services", "NAME TYPE CLUSTER-IP EXTERNAL-IP PORT(S) AGE"},
			{"configmaps", "NAME DATA AGE"},
			{"secrets", "NAME TYPE DATA AGE"},
			{"events", "LAST SEEN TYPE REASON OBJECT MESSAGE"},
			{"leases", "NAME HOLDER AGE"},
			{"namespaces", "NAME STATUS AGE"},
			{"nodes", "NAME STATUS ROLES AGE VERSION"},
		} {
			out := k.run("", "get", tc.resource, "-n", "kc")
			if got := strings.Join(strings.Fields(strings.SplitN(out, "\n", 2)[0]), " "); got != tc.header {
				t.Errorf("get %s: header %q, want %q\n%s", tc.resource, got, tc.header, out)
			}
		}
		out := k.run("", "get", "services", "web", "-n", "kc", "--no-headers")
		if f := strings.Fields(out); len(f) < 5 || f[1] != "ClusterIP" || !strings.HasPrefix(f[2], "10.") || f[4] != "80/TCP" {
			t.Errorf("service row %q: want ClusterIP, an allocated 10.x address and 80/TCP", out)
		}
	})

	t.Run("discovery: short names and the all category", func(t *testing.T) {
		out := k.run("", "get", "all", "-n", "kc", "-o", "name")
		for _, want := range []string{"deployment.apps/web", "service/web"} {
			if !strings.Contains(out, want) {
				t.Errorf("get all: no %s in\n%s", want, out)
			}
		}
		if out := k.run("", "get", "deploy,svc,cm", "-n", "kc", "-o", "name"); !strings.Contains(out, "configmap/settings") {
			t.Errorf("short names: %s", out)
		}
	})

	t.Run("unknown fields are refused by strict validation", func(t *testing.T) {
		bad := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: typo, namespace: kc}\ndta: {a: b}\n"
		_, errOut, err := k.try(bad, "apply", "-f", "-")
		if err == nil || !strings.Contains(errOut, `unknown field "dta"`) {
			t.Errorf("apply with an unknown field: err %v, stderr %q", err, errOut)
		}
	})

	t.Run("get -o yaml", func(t *testing.T) {
		out := k.run("", "get", "deployment", "web", "-n", "kc", "-o", "yaml")
		for _, want := range []string{"kind: Deployment", "apiVersion: apps/v1", "resourceVersion:", "uid:", "generation: 2", "progressDeadlineSeconds: 600", "kubectl.kubernetes.io/last-applied-configuration"} {
			if !strings.Contains(out, want) {
				t.Errorf("no %q in\n%s", want, out)
			}
		}
	})

	t.Run("get -w sees an update", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		cmd := k.command(ctx, "", "get", "configmap", "settings", "-n", "kc", "-w", "-o", "jsonpath={.data.mode}{\"\\n\"}")
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { cancel(); _ = cmd.Wait() }()
		lines := bufio.NewScanner(stdout)
		if !lines.Scan() || lines.Text() != "green" {
			t.Fatalf("first watch line %q, want green", lines.Text())
		}
		k.run("", "patch", "configmap", "settings", "-n", "kc", "--type=merge", "-p", `{"data":{"mode":"red"}}`)
		if !lines.Scan() || lines.Text() != "red" {
			t.Fatalf("watch line after the patch %q, want red", lines.Text())
		}
	})

	t.Run("describe pod", func(t *testing.T) {
		k.run(`apiVersion: v1
kind: Pod
metadata: {name: lone, namespace: kc}
spec:
  containers: [{name: c, image: busybox:1.36}]
`, "apply", "-f", "-")
		cs := adminClient(t)
		pod, err := cs.CoreV1().Pods("kc").Get(context.Background(), "lone", metav1.GetOptions{})
		check(t, err)
		// describe finds a pod's events by involvedObject.{name,namespace,uid}.
		_, err = cs.CoreV1().Events("kc").Create(context.Background(), &corev1.Event{
			ObjectMeta:     metav1.ObjectMeta{GenerateName: "lone-"},
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "kc", Name: "lone", APIVersion: "v1", UID: pod.UID},
			Reason:         "Scheduled", Message: "Successfully assigned kc/lone to nowhere", Type: corev1.EventTypeNormal,
			Source: corev1.EventSource{Component: "default-scheduler"}, Count: 1,
			FirstTimestamp: metav1.Now(), LastTimestamp: metav1.Now(),
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		out := k.run("", "describe", "pod", "lone", "-n", "kc")
		for _, want := range []string{"Name:", "lone", "Namespace:", "kc", "Service Account:  default", "Status:", "Pending", "busybox:1.36", "Events:", "Successfully assigned kc/lone to nowhere"} {
			if !strings.Contains(out, want) {
				t.Errorf("no %q in\n%s", want, out)
			}
		}
	})

	t.Run("label, annotate, scale", func(t *testing.T) {
		k.run("", "label", "deployment", "web", "-n", "kc", "tier=front")
		k.run("", "annotate", "deployment", "web", "-n", "kc", "owner=team-a")
		if out := k.run("", "scale", "deployment", "web", "-n", "kc", "--replicas=3"); !strings.Contains(out, "deployment.apps/web scaled") {
			t.Errorf("scale said %q", out)
		}
		out := k.run("", "get", "deployment", "web", "-n", "kc", "-o", "jsonpath={.metadata.labels.tier} {.metadata.annotations.owner} {.spec.replicas}")
		if out != "front team-a 3" {
			t.Errorf("after label, annotate, scale: %q, want \"front team-a 3\"", out)
		}
	})

	t.Run("viewer is refused a create", func(t *testing.T) {
		if out := k.run("", "--context", KubeconfigViewerContext, "get", "configmaps", "-n", "kc", "-o", "name"); !strings.Contains(out, "configmap/settings") {
			t.Errorf("viewer list: %q", out)
		}
		_, errOut, err := k.try("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: nope, namespace: kc}\n", "--context", KubeconfigViewerContext, "create", "-f", "-")
		if err == nil || !strings.Contains(errOut, "Error from server (Forbidden)") {
			t.Errorf("viewer create: err %v, stderr %q; want Forbidden", err, errOut)
		}
	})

	t.Run("oldest and newest kubectl", func(t *testing.T) {
		for _, v := range []string{"1.27", "1.33"} {
			kv := newKubectl(t, testServer, "/usr/lib/google-cloud-sdk/bin/kubectl."+v)
			name := "skew-" + strings.ReplaceAll(v, ".", "-")
			kv.run("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: "+name+", namespace: kc}\ndata: {v: \""+v+"\"}\n", "apply", "-f", "-")
			if out := kv.run("", "get", "configmap", name, "-n", "kc"); !strings.HasPrefix(out, "NAME") {
				t.Errorf("kubectl %s get: %q", v, out)
			}
		}
	})

	t.Run("delete and delete namespace", func(t *testing.T) {
		if out := k.run("", "delete", "deployment", "web", "-n", "kc"); !strings.Contains(out, `deployment.apps "web" deleted`) {
			t.Errorf("delete said %q", out)
		}
		if out := k.run("", "delete", "namespace", "kc", "--timeout=45s"); !strings.Contains(out, `namespace "kc" deleted`) {
			t.Errorf("delete namespace said %q", out)
		}
		_, errOut, err := k.try("", "get", "configmap", "settings", "-n", "kc")
		if err == nil || !strings.Contains(errOut, "NotFound") {
			t.Errorf("configmap of a deleted namespace: %v %s", err, errOut)
		}
	})
}

// seedTableObjects creates in ns one object of each kind whose table has no
// row yet after the manifest: a node, a replicaset, a pod, an event and a
// lease.
func seedTableObjects(t *testing.T, ns string) {
	t.Helper()
	ctx := context.Background()
	cs := adminClient(t)
	labels := map[string]string{"app": "table"}
	podSpec := corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox:1.36"}}}
	_, err := cs.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "table-node"}}, metav1.CreateOptions{})
	check(t, err)
	t.Cleanup(func() { _ = cs.CoreV1().Nodes().Delete(ctx, "table-node", metav1.DeleteOptions{}) })
	_, err = cs.AppsV1().ReplicaSets(ns).Create(ctx, &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: "table-rs"},
		Spec: appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: podSpec}},
	}, metav1.CreateOptions{})
	check(t, err)
	_, err = cs.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "table-pod"}, Spec: podSpec}, metav1.CreateOptions{})
	check(t, err)
	_, err = cs.CoreV1().Events(ns).Create(ctx, &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: "table-pod.1"},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: "table-pod"},
		Reason:         "Created", Message: "seeded", Type: corev1.EventTypeNormal, Count: 1, LastTimestamp: metav1.Now(),
	}, metav1.CreateOptions{})
	check(t, err)
	holder := "table-node"
	_, err = cs.CoordinationV1().Leases(ns).Create(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "table-lease"},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder}}, metav1.CreateOptions{})
	check(t, err)
}

func check(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
