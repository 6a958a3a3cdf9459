package apiserver

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/retry"
)

func TestTypedClientCRUD(t *testing.T) {
	ctx := context.Background()
	cs := adminClient(t)
	ns := createNamespace(t, cs, "crud")
	cms := cs.CoreV1().ConfigMaps(ns)

	created, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm"}, Data: map[string]string{"k": "v"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if created.UID == "" || created.ResourceVersion == "" || created.CreationTimestamp.IsZero() {
		t.Errorf("created object lacks uid, resourceVersion or creationTimestamp: %+v", created.ObjectMeta)
	}
	got, err := cms.Get(ctx, "cm", metav1.GetOptions{})
	if err != nil || got.Data["k"] != "v" {
		t.Fatalf("get: %v, %v", got, err)
	}
	got.Data["k"] = "w"
	updated, err := cms.Update(ctx, got, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if updated.ResourceVersion == created.ResourceVersion {
		t.Errorf("update kept resourceVersion %s", updated.ResourceVersion)
	}
	list, err := cms.List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 1 {
		t.Fatalf("list: %v, %v", list, err)
	}
	if err := cms.Delete(ctx, "cm", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cms.Get(ctx, "cm", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("get after delete: %v, want NotFound", err)
	}
}

func TestPodDefaultsAsKubeAPIServer(t *testing.T) {
	ctx := context.Background()
	cs := adminClient(t)
	ns := createNamespace(t, cs, "defaults")
	pod, err := cs.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "web-"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx"}, {Name: "side", Image: "busybox:1.36"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s := pod.Spec
	if len(pod.Name) <= len("web-") {
		t.Errorf("generateName gave %q", pod.Name)
	}
	if s.RestartPolicy != corev1.RestartPolicyAlways || s.DNSPolicy != corev1.DNSClusterFirst || s.SchedulerName != "default-scheduler" ||
		s.TerminationGracePeriodSeconds == nil || *s.TerminationGracePeriodSeconds != 30 || s.ServiceAccountName != "default" {
		t.Errorf("pod spec defaults: restartPolicy %q dnsPolicy %q schedulerName %q grace %v serviceAccountName %q",
			s.RestartPolicy, s.DNSPolicy, s.SchedulerName, s.TerminationGracePeriodSeconds, s.ServiceAccountName)
	}
	if s.Containers[0].ImagePullPolicy != corev1.PullAlways || s.Containers[1].ImagePullPolicy != corev1.PullIfNotPresent {
		t.Errorf("imagePullPolicy: untagged %q, tagged %q; want Always, IfNotPresent", s.Containers[0].ImagePullPolicy, s.Containers[1].ImagePullPolicy)
	}
	if len(s.Tolerations) != 2 {
		t.Errorf("tolerations %v, want DefaultTolerationSeconds' two", s.Tolerations)
	}
	if pod.Status.Phase != corev1.PodPending {
		t.Errorf("phase %q, want Pending", pod.Status.Phase)
	}
}

// createNamespace creates a fresh namespace named after prefix// for the test.
func createNamespace(t *testing.T, cs kubernetes.Interface, prefix string) string {
	t.Helper()
	ns, err := cs.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

// TestInformerSyncsAndSeesUpdates runs a client-go 0.37 informer, which
// lists with the WatchList protocol (a watch with sendInitialEvents=true
// ending in a bookmark), and checks it sees an update made afterwards.
func TestInformerSyncsAndSeesUpdates(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cs := adminClient(t)
	ns := createNamespace(t, cs, "informer")
	for _, name := range []string{"a", "b"} {
		_, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
		check(t, err)
	}
	var watchListRequests atomic.Int32
	cfg := testServer.RESTConfig(testServer.AdminToken())
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
			if req.URL.Query().Get("sendInitialEvents") == "true" {
				watchListRequests.Add(1)
			}
			return rt.RoundTrip(req)
		})
	})
	informerClient, err := kubernetes.NewForConfig(cfg)
	check(t, err)
	factory := informers.NewSharedInformerFactoryWithOptions(informerClient, 0, informers.WithNamespace(ns))
	inf := factory.Core().V1().ConfigMaps()
	updated := make(chan string, 10)
	_, err = inf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(_, obj any) { updated <- obj.(*corev1.ConfigMap).Data["k"] },
	})
	check(t, err)
	factory.Start(ctx.Done())
	defer factory.Shutdown()
	defer cancel()
	if !cache.WaitForCacheSync(ctx.Done(), inf.Informer().HasSynced) {
		t.Fatal("informer did not sync")
	}
	if n := len(inf.Informer().GetStore().List()); n != 2 {
		t.Errorf("synced store holds %d configmaps, want 2", n)
	}
	if watchListRequests.Load() == 0 {
		t.Error("the informer made no sendInitialEvents=true watch: WatchList was not used")
	}
	_, err = cs.CoreV1().ConfigMaps(ns).Update(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Data: map[string]string{"k": "v"}}, metav1.UpdateOptions{})
	check(t, err)
	select {
	case v := <-updated:
		if v != "v" {
			t.Errorf("update event carries data %q", v)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("informer saw no update in 10s")
	}
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestNoLostUpdates has 20 goroutines increment one annotation N times each
// with read-modify-write, retrying on 409 Conflict: optimistic concurrency
// through resourceVersion must make every increment count.
func TestNoLostUpdates(t *testing.T) {
	const workers, increments = 20, 10
	ctx := context.Background()
	cs := adminClient(t)
	ns := createNamespace(t, cs, "lost-update")
	_, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "counter", Annotations: map[string]string{"count": "0"}}}, metav1.CreateOptions{})
	check(t, err)
	// 20 writers on one object conflict often: retry far more than
	// retry.DefaultRetry's 5 times, with jittered backoff.
	contended := wait.Backoff{Steps: 1000, Duration: 2 * time.Millisecond, Factor: 1, Jitter: 4}
	var conflicts atomic.Int32
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for range workers {
		wg.Go(func() {
			for range increments {
				err := retry.OnError(contended, func(err error) bool {
					if apierrors.IsConflict(err) {
						conflicts.Add(1)
						return true
					}
					return false
				}, func() error {
					cm, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "counter", metav1.GetOptions{})
					if err != nil {
						return err
					}
					n, _ := strconv.Atoi(cm.Annotations["count"])
					cm.Annotations["count"] = strconv.Itoa(n + 1)
					_, err = cs.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{})
					return err
				})
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	cm, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "counter", metav1.GetOptions{})
	check(t, err)
	if got := cm.Annotations["count"]; got != strconv.Itoa(workers*increments) {
		t.Errorf("count %s, want %d", got, workers*increments)
	}
	t.Logf("%d conflicts retried", conflicts.Load())
}
