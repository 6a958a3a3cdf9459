package cli

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/etcdscope/etcdscope/embedded"
	"github.com/etcdscope/etcdscope/embedded/controlplane"
	"github.com/etcdscope/etcdscope/embedded/kube"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// TestWritePathFeedShowsAWriteThroughTheAPIServer creates a ConfigMap
// with the kubeconfig the write path names, and expects the write on the
// feed, with the admission plugins that handled it, at the revision etcd
// committed it at. The control plane runs once in this test binary: its
// controller manager runs once per process.
func TestWritePathFeedShowsAWriteThroughTheAPIServer(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cp, err := controlplane.Start(ctx, controlplane.Options{Cluster: embedded.Options{Members: 1}, APIServer: true})
	if err != nil {
		t.Fatal(err)
	}
	defer cp.Close()
	select {
	case <-cp.Ready():
	case err := <-cp.Errors():
		t.Fatal(err)
	case <-ctx.Done():
		t.Fatal("the control plane was not ready in time")
	}
	feed, stop := writePathFeed(cp)
	defer stop()
	if feed.Reactions != nil {
		t.Error("reactions without the demo")
	}
	kubeconfig, ok := strings.CutPrefix(feed.Note, "kubectl --kubeconfig ")
	if !ok {
		t.Fatalf("the note %q names no kubeconfig", feed.Note)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cm, err := cs.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "seen"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for {
		select {
		case w := <-feed.Writes:
			if w.Name != "seen" {
				continue // the API server's own writes
			}
			if w.Verb != "create" || w.Resource != "configmaps" || w.Key != "/registry/configmaps/default/seen" ||
				cm.ResourceVersion != strconv.FormatInt(w.Revision, 10) || len(w.Admission) == 0 || w.User != kube.AdminUser ||
				w.Decision != "allow" || w.RefusedAt != "" || w.Encoding != "protobuf" {
				t.Errorf("the write on the feed: %+v, want the admin's create of configmaps/default/seen at %s through admission", w, cm.ResourceVersion)
			}
			return
		case <-ctx.Done():
			t.Fatal("the create never reached the write path")
		}
	}
}
