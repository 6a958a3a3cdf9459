package demo

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/etcdscope/etcdscope/decode"
	clientv3 "go.etcd.io/etcd/client/v3"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
)

// deadline bounds every wait on the control plane.
const deadline = 60 * time.Second

// eventually polls cond until it holds, and fails with its last complaint
// when it does not within deadline.
func eventually(t *testing.T, what string, cond func(ctx context.Context) (complaint string)) {
	t.Helper()
	var last string
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, deadline, true, func(ctx context.Context) (bool, error) {
		last = cond(ctx)
		return last == "", nil
	})
	if err != nil {
		t.Fatalf("%s: not within %v: %s", what, deadline, last)
	}
}

// protobufMagic starts every value kube-apiserver stores as protobuf.
var protobufMagic = []byte("k8s\x00")

func TestBootstrapObjectsAreStoredAsKubeAPIServerStoresThem(t *testing.T) {
	keys := []string{
		"/registry/namespaces/default", "/registry/namespaces/kube-system", "/registry/namespaces/kube-public", "/registry/namespaces/kube-node-lease",
		"/registry/services/specs/default/kubernetes", "/registry/services/endpoints/default/kubernetes",
		"/registry/endpointslices/default/kubernetes",
		"/registry/serviceaccounts/kube-system/coredns", "/registry/configmaps/kube-system/coredns",
		"/registry/deployments/kube-system/coredns", "/registry/services/specs/kube-system/kube-dns",
		"/registry/serviceaccounts/kube-system/kube-proxy", "/registry/configmaps/kube-system/kube-proxy",
		"/registry/daemonsets/kube-system/kube-proxy",
		"/registry/storageclasses/standard", "/registry/csidrivers/" + csiDriver,
		"/registry/clusterroles/system:coredns", "/registry/clusterrolebindings/system:coredns",
		"/registry/clusterrolebindings/kubeadm:node-proxier",
		// what the components write once they run
		"/registry/serviceaccounts/default/default", "/registry/serviceaccounts/kube-system/default",
		"/registry/serviceaccounts/kube-public/default", "/registry/serviceaccounts/kube-node-lease/default",
		"/registry/replicasets/kube-system/", "/registry/controllerrevisions/kube-system/",
		"/registry/serviceaccounts/kube-system/csi-provisioner", "/registry/clusterrolebindings/csi-provisioner-role",
	}
	for i := range 3 {
		keys = append(keys, "/registry/minions/"+nodeName(i), "/registry/leases/kube-node-lease/"+nodeName(i))
	}
	cli := etcdClient(t)
	eventually(t, "every bootstrap object in etcd, as protobuf", func(ctx context.Context) string {
		for _, k := range keys {
			resp, err := cli.Get(ctx, k, clientv3.WithPrefix(), clientv3.WithLimit(1))
			if err != nil {
				return err.Error()
			}
			if len(resp.Kvs) == 0 {
				return "no " + k
			}
			kv := resp.Kvs[0]
			if !bytes.HasPrefix(kv.Value, protobufMagic) {
				return fmt.Sprintf("%s is not protobuf: %q", kv.Key, kv.Value[:min(len(kv.Value), 16)])
			}
			if obj := decode.Decode(string(kv.Key), kv.Value); obj.Problem != "" {
				return fmt.Sprintf("%s: %s", kv.Key, obj.Problem)
			}
		}
		return ""
	})
	// CoreDNS and kube-proxy run: two coredns pods, one kube-proxy a node.
	client := adminClient(t)
	eventually(t, "CoreDNS and kube-proxy pods running", func(ctx context.Context) string {
		pods, err := client.CoreV1().Pods("kube-system").List(ctx, metav1.ListOptions{})
		if err != nil {
			return err.Error()
		}
		running := map[string]int{}
		for _, p := range pods.Items {
			if p.Status.Phase == corev1.PodRunning {
				running[p.Labels["k8s-app"]]++
			}
		}
		if running["kube-dns"] != 2 || running["kube-proxy"] != 3 {
			return fmt.Sprintf("running: %v", running)
		}
		return ""
	})
}

func TestDeploymentLifecycle(t *testing.T) {
	client := adminClient(t)
	ctx := context.Background()
	ns := createNamespace(t, client, "deploy")
	if _, err := client.AppsV1().Deployments(ns).Create(ctx, WebDeployment(ns, "web", 3, "nginx:1.27"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.CoreV1().Services(ns).Create(ctx, WebService(ns, "web"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pods := waitRunning(t, client, ns, "nginx:1.27")

	t.Run("EndpointSlicesListThePodIPs", func(t *testing.T) {
		var want []string
		for _, p := range pods {
			want = append(want, p.Status.PodIP)
		}
		slices.Sort(want)
		eventually(t, "the EndpointSlice lists the pods' IPs", func(ctx context.Context) string {
			list, err := client.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=web"})
			if err != nil {
				return err.Error()
			}
			var got []string
			for _, s := range list.Items {
				got = append(got, readyAddresses(&s)...)
			}
			slices.Sort(got)
			if !slices.Equal(got, want) {
				return fmt.Sprintf("slices list %v, pods have %v", got, want)
			}
			return ""
		})
	})

	t.Run("RollingUpdateReplacesEveryPod", func(t *testing.T) {
		old := map[types.UID]bool{}
		for _, p := range pods {
			old[p.UID] = true
		}
		if _, err := client.AppsV1().Deployments(ns).Patch(ctx, "web", types.StrategicMergePatchType,
			[]byte(`{"spec":{"template":{"spec":{"containers":[{"name":"web","image":"nginx:1.28"}]}}}}`), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		pods = waitRunning(t, client, ns, "nginx:1.28")
		for _, p := range pods {
			if old[p.UID] {
				t.Errorf("pod %s of the old template survived the rollout", p.Name)
			}
		}
		eventually(t, "the old ReplicaSet at 0", func(ctx context.Context) string {
			rss, err := client.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				return err.Error()
			}
			if len(rss.Items) != 2 {
				return fmt.Sprintf("%d ReplicaSets", len(rss.Items))
			}
			for _, rs := range rss.Items {
				want := int32(0)
				if rs.Spec.Template.Spec.Containers[0].Image == "nginx:1.28" {
					want = 3
				}
				if *rs.Spec.Replicas != want || rs.Status.Replicas != want {
					return fmt.Sprintf("ReplicaSet %s (%s) wants %d, has %d", rs.Name, rs.Labels[appsv1.DefaultDeploymentUniqueLabelKey], *rs.Spec.Replicas, rs.Status.Replicas)
				}
			}
			return ""
		})
	})

	t.Run("DeletedPodIsReplaced", func(t *testing.T) {
		victim := pods[0]
		if err := client.CoreV1().Pods(ns).Delete(ctx, victim.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		eventually(t, "three running pods without the deleted one", func(ctx context.Context) string {
			list, err := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
			if err != nil {
				return err.Error()
			}
			running := 0
			for _, p := range list.Items {
				if p.UID == victim.UID {
					return victim.Name + " is still there"
				}
				if p.Status.Phase == corev1.PodRunning {
					running++
				}
			}
			if running != 3 {
				return fmt.Sprintf("%d running", running)
			}
			return ""
		})
	})
}

func createNamespace(t *testing.T, client kubernetes.Interface, prefix string) string {
	t.Helper()
	ns, err := client.CoreV1().Namespaces().Create(context.Background(),
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

// waitRunning waits for exactly three running pods of app=web in ns, all
// of image, each bound to a node and with an IP, and no others.
func waitRunning(t *testing.T, client kubernetes.Interface, ns, image string) []corev1.Pod {
	t.Helper()
	var pods []corev1.Pod
	eventually(t, "3 running pods of "+image, func(ctx context.Context) string {
		list, err := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
		if err != nil {
			return err.Error()
		}
		pods = list.Items
		var states []string
		ok := len(pods) == 3
		for _, p := range pods {
			states = append(states, fmt.Sprintf("%s %s %s on %q ip %q", p.Name, p.Spec.Containers[0].Image, p.Status.Phase, p.Spec.NodeName, p.Status.PodIP))
			ok = ok && p.Spec.Containers[0].Image == image && p.Status.Phase == corev1.PodRunning && p.Spec.NodeName != "" && p.Status.PodIP != ""
		}
		if !ok {
			// Never empty: with no pod yet, the complaint is the count.
			return fmt.Sprintf("%d pods: %s", len(pods), strings.Join(states, "; "))
		}
		return ""
	})
	return pods
}

func TestLeasesAreRenewedAtTheirPeriod(t *testing.T) {
	cli := etcdClient(t)
	for _, c := range []struct {
		key    string
		period time.Duration
	}{
		{"/registry/leases/kube-node-lease/node-1", nodeLeaseRenew},
		{"/registry/leases/kube-node-lease/node-2", nodeLeaseRenew},
	} {
		t.Run(c.key, func(t *testing.T) {
			t.Parallel()
			// Three successive mod revisions of the Lease, and the renew
			// times they hold.
			var revs []int64
			var renewed []time.Time
			eventually(t, "three renewals", func(ctx context.Context) string {
				resp, err := cli.Get(ctx, c.key)
				if err != nil || len(resp.Kvs) == 0 {
					return fmt.Sprintf("get %s: %v", c.key, err)
				}
				kv := resp.Kvs[0]
				if len(revs) == 0 || revs[len(revs)-1] != kv.ModRevision {
					obj := decode.Decode(c.key, kv.Value)
					l, ok := obj.Object.(*coordinationv1.Lease)
					if !ok || l.Spec.RenewTime == nil {
						return fmt.Sprintf("%s holds no Lease with a renew time: %s", c.key, obj.Problem)
					}
					revs = append(revs, kv.ModRevision)
					renewed = append(renewed, l.Spec.RenewTime.Time)
				}
				if len(revs) < 4 {
					return fmt.Sprintf("mod revisions so far %v", revs)
				}
				return ""
			})
			// The first gap may be partial; the later ones are periods.
			for i := 2; i < len(renewed); i++ {
				gap := renewed[i].Sub(renewed[i-1])
				if gap < c.period*8/10 || gap > c.period*15/10 {
					t.Errorf("renewals at revisions %d and %d are %v apart; want about %v", revs[i-1], revs[i], gap, c.period)
				}
			}
		})
	}
}

func TestDeletingANamespaceRemovesEverythingInIt(t *testing.T) {
	client := adminClient(t)
	ctx := context.Background()
	ns := createNamespace(t, client, "doomed")
	if _, err := client.AppsV1().Deployments(ns).Create(ctx, WebDeployment(ns, "web", 3, "nginx:1.27"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.CoreV1().Services(ns).Create(ctx, WebService(ns, "web"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.AppsV1().StatefulSets(ns).Create(ctx, dbStatefulSet(ns), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitRunning(t, client, ns, "nginx:1.27")
	var volumes []string
	eventually(t, "the StatefulSet's claims bound and its pods running", func(ctx context.Context) string {
		claims, err := client.CoreV1().PersistentVolumeClaims(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err.Error()
		}
		volumes = nil
		for _, c := range claims.Items {
			if c.Status.Phase != corev1.ClaimBound {
				return c.Name + " is " + string(c.Status.Phase)
			}
			volumes = append(volumes, c.Spec.VolumeName)
		}
		if len(volumes) != 2 {
			return fmt.Sprintf("%d claims", len(volumes))
		}
		for _, name := range []string{"db-0", "db-1"} {
			p, err := client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil || p.Status.Phase != corev1.PodRunning {
				return fmt.Sprintf("pod %s: %v", name, err)
			}
		}
		return ""
	})
	if err := client.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	cli := etcdClient(t)
	eventually(t, "no key of "+ns+" left, nor its volumes", func(ctx context.Context) string {
		resp, err := cli.Get(ctx, "/registry/", clientv3.WithPrefix(), clientv3.WithKeysOnly())
		if err != nil {
			return err.Error()
		}
		var left []string
		for _, kv := range resp.Kvs {
			k := string(kv.Key)
			parts := strings.Split(k, "/")
			if slices.Contains(parts, ns) {
				left = append(left, k)
			}
			for _, v := range volumes {
				if strings.HasSuffix(k, "/"+v) {
					left = append(left, k)
				}
			}
		}
		if len(left) > 0 {
			return fmt.Sprintf("left: %v", left)
		}
		return ""
	})
}
