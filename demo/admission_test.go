package demo

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/etcdscope/etcdscope/decode"
	"github.com/etcdscope/etcdscope/embedded/kube"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
)

// TestAdmissionWebhookAndPolicy writes through kube-apiserver's admission
// as a user would: the mutating webhook's label is in the stored Pod, the
// validating webhook's refusal and the ValidatingAdmissionPolicy's come
// back to the client, and to the real kubectl; the write path names the
// webhook that mutated the Pod.
func TestAdmissionWebhookAndPolicy(t *testing.T) {
	client := adminClient(t)
	ctx := context.Background()
	writes, stopWrites := testCP.Writes().Subscribe(4096)
	defer stopWrites()
	const ns = "admission"
	if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod := func(name, image string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: image}}}}
	}
	// kube-apiserver sees a new webhook configuration through an informer:
	// the first Pods may pass before it does.
	var labelled string
	eventually(t, "the mutating webhook labels a Pod", func(ctx context.Context) string {
		name := fmt.Sprintf("labelled-%d", time.Now().UnixNano())
		p, err := client.CoreV1().Pods(ns).Create(ctx, pod(name, "nginx:1.27"), metav1.CreateOptions{})
		if err != nil {
			return err.Error()
		}
		if p.Labels[WebhookLabel] != webhookLabelValue {
			return fmt.Sprintf("labels %v", p.Labels)
		}
		labelled = name
		return ""
	})
	resp, err := etcdClient(t).Get(ctx, "/registry/pods/"+ns+"/"+labelled)
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("the labelled Pod in etcd: %v", err)
	}
	if stored, ok := decode.Decode(string(resp.Kvs[0].Key), resp.Kvs[0].Value).Object.(*corev1.Pod); !ok || stored.Labels[WebhookLabel] != webhookLabelValue {
		t.Errorf("the stored Pod lacks the webhook's label: %+v", stored)
	}
	wantNote := fmt.Sprintf("mutating webhook label.%s (%s): mutated the object", webhookName, webhookName)
	if notes := webhookNotes(t, writes, ns, labelled); !slices.Contains(notes, wantNote) {
		t.Errorf("the write path of the labelled Pod's create: webhooks %q, want %q", notes, wantNote)
	}

	eventually(t, "the validating webhook refuses the forbidden image", func(ctx context.Context) string {
		_, err := client.CoreV1().Pods(ns).Create(ctx, pod("miner", ForbiddenImage), metav1.CreateOptions{})
		if err == nil {
			_ = client.CoreV1().Pods(ns).Delete(ctx, "miner", metav1.DeleteOptions{})
			return "created"
		}
		if !strings.Contains(err.Error(), `admission webhook "images.demo.etcdscope.io" denied the request`) {
			return err.Error()
		}
		return ""
	})
	t.Run("kubectl hears the refusal", func(t *testing.T) {
		out := kubectl(t, "run", "miner", "-n", ns, "--image", ForbiddenImage)
		if !strings.Contains(out, "is not allowed in this cluster") {
			t.Errorf("kubectl run: %s", out)
		}
	})
	eventually(t, "the ValidatingAdmissionPolicy caps replicas", func(ctx context.Context) string {
		d := WebDeployment(ns, fmt.Sprintf("big-%d", time.Now().UnixNano()), 10*MaxReplicas, "nginx:1.27")
		_, err := client.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{})
		if err == nil {
			return "created"
		}
		if !strings.Contains(err.Error(), fmt.Sprintf("a Deployment runs at most %d replicas here", MaxReplicas)) {
			return err.Error()
		}
		return ""
	})
}

// webhookNotes are the write path's webhook lines of the create of Pod
// ns/name, read from writes within a deadline.
func webhookNotes(t *testing.T, writes <-chan kube.Write, ns, name string) []string {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case w := <-writes:
			if w.Verb == "create" && w.Resource == "pods" && w.Namespace == ns && w.Name == name {
				return w.Webhooks
			}
		case <-deadline:
			t.Fatalf("no write of the create of Pod %s/%s within 30 s", ns, name)
		}
	}
}

// TestCustomResourcesAreStoredAsJSON creates a Cart of the demo's CRD and
// reads it back from etcd, as etcdscope get does.
func TestCustomResourcesAreStoredAsJSON(t *testing.T) {
	dyn, err := dynamic.NewForConfig(configFor("admin"))
	if err != nil {
		t.Fatal(err)
	}
	key := "/registry/shop.etcdscope.io/carts/default/cart-7"
	eventually(t, "a Cart is created once its CRD is served", func(ctx context.Context) string {
		if err := createCart(ctx, dyn, "default", 7); err != nil {
			return err.Error()
		}
		return ""
	})
	resp, err := etcdClient(t).Get(context.Background(), key)
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("get %s: %v", key, err)
	}
	obj := decode.Decode(key, resp.Kvs[0].Value)
	if obj.Format != decode.FormatJSON || obj.GVK.Kind != "Cart" || obj.Problem != "" || !strings.Contains(obj.YAML(), "customer: customer-7") {
		t.Errorf("%s: format %s kind %q problem %q\n%s", key, obj.Format, obj.GVK.Kind, obj.Problem, obj.YAML())
	}
}

// kubectl runs the real kubectl as the admin and returns its combined
// output; a failure is what the caller checks.
func kubectl(t *testing.T, args ...string) string {
	t.Helper()
	const bin = "/usr/bin/kubectl"
	if _, err := os.Stat(bin); err != nil {
		if os.Getenv("ETCDSCOPE_REQUIRE_KUBECTL") != "" {
			t.Fatalf("kubectl required (ETCDSCOPE_REQUIRE_KUBECTL=1) but %s: %v", bin, err)
		}
		t.Skipf("no kubectl at %s", bin)
	}
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := testCP.WriteKubeconfig(kubeconfig); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, _ := exec.CommandContext(ctx, bin, append([]string{"--kubeconfig", kubeconfig, "--cache-dir", filepath.Join(dir, "cache")}, args...)...).CombinedOutput()
	return string(out)
}
