package demo

import (
	"context"
	"fmt"
	"sort"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"
)

// defaultScheduler is the scheduler name pods ask for when they name none.
const defaultScheduler = "default-scheduler"

// scheduler is a kube-scheduler cut down to one filter (requests fit the
// node's allocatable, node affinity and selector match, no untolerated
// NoSchedule taint) and one score (the least requested node). Like the real
// one it binds through the pods/binding subresource and remembers the pods
// it assumed until its informer sees them bound.
type scheduler struct {
	client   kubernetes.Interface
	pods     corelisters.PodLister
	nodes    corelisters.NodeLister
	queue    workqueue.TypedRateLimitingInterface[string]
	recorder record.EventRecorder

	mu      sync.Mutex
	assumed map[types.UID]assumedPod
}

type assumedPod struct {
	node string
	pod  *corev1.Pod
}

func (d *Demo) runScheduler(ctx context.Context, c clients) error {
	client, err := c.forUser(schedulerUser, "kube-scheduler")
	if err != nil {
		return err
	}
	return leaderElect(ctx, client, "kube-scheduler", "scheduler-0_"+string(uuid.NewUUID()), func(ctx context.Context) {
		f := informers.NewSharedInformerFactory(client, resync)
		defer f.Shutdown()
		broadcaster := record.NewBroadcaster(record.WithContext(ctx))
		defer broadcaster.Shutdown()
		broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: client.CoreV1().Events("")})
		s := &scheduler{
			client: client, pods: f.Core().V1().Pods().Lister(), nodes: f.Core().V1().Nodes().Lister(),
			queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
				workqueue.TypedRateLimitingQueueConfig[string]{Name: "scheduler"}),
			recorder: broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: defaultScheduler}),
			assumed:  map[types.UID]assumedPod{},
		}
		defer s.queue.ShutDown()
		podInf, nodeInf := f.Core().V1().Pods().Informer(), f.Core().V1().Nodes().Informer()
		d.observe("kube-scheduler", "pods", podInf, nil)
		d.observe("kube-scheduler", "nodes", nodeInf, nil)
		_, _ = podInf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    s.enqueue,
			UpdateFunc: func(_, obj any) { s.enqueue(obj) },
			DeleteFunc: s.forget,
		})
		// A node that arrives or changes may fit a pod that fit nowhere.
		_, _ = nodeInf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    func(any) { s.enqueuePending() },
			UpdateFunc: func(any, any) { s.enqueuePending() },
		})
		f.Start(ctx.Done())
		if !cache.WaitForCacheSync(ctx.Done(), podInf.HasSynced, nodeInf.HasSynced) {
			return
		}
		go func() {
			<-ctx.Done()
			s.queue.ShutDown() // ends the worker's Get
		}()
		wait.UntilWithContext(ctx, s.worker, 0)
	})
}

func (s *scheduler) enqueue(obj any) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	if pod.Spec.NodeName != "" {
		s.mu.Lock()
		delete(s.assumed, pod.UID) // the informer has the binding now
		s.mu.Unlock()
		return
	}
	if pod.DeletionTimestamp == nil && (pod.Spec.SchedulerName == "" || pod.Spec.SchedulerName == defaultScheduler) {
		if key, err := cache.MetaNamespaceKeyFunc(pod); err == nil {
			s.queue.Add(key)
		}
	}
}

func (s *scheduler) forget(obj any) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	if pod, ok := obj.(*corev1.Pod); ok {
		s.mu.Lock()
		delete(s.assumed, pod.UID)
		s.mu.Unlock()
	}
	s.enqueuePending() // its room is free again
}

func (s *scheduler) enqueuePending() {
	pods, _ := s.pods.List(labelsEverything)
	for _, p := range pods {
		if p.Spec.NodeName == "" {
			s.enqueue(p)
		}
	}
}

func (s *scheduler) worker(ctx context.Context) { work(ctx, s.queue, once(s.schedule)) }

func (s *scheduler) schedule(ctx context.Context, key string) error {
	ns, name, _ := cache.SplitMetaNamespaceKey(key)
	pod, err := s.pods.Pods(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil || pod.Spec.NodeName != "" || pod.DeletionTimestamp != nil {
		return err
	}
	s.mu.Lock()
	_, assumed := s.assumed[pod.UID]
	s.mu.Unlock()
	if assumed {
		return nil
	}
	node, why, err := s.pick(pod)
	if err != nil {
		return err
	}
	if node == "" {
		s.recorder.Eventf(pod, corev1.EventTypeWarning, "FailedScheduling", "0/%d nodes are available: %s.", s.nodeCount(), why)
		return s.markUnschedulable(ctx, pod, why)
	}
	s.mu.Lock()
	s.assumed[pod.UID] = assumedPod{node: node, pod: pod}
	s.mu.Unlock()
	err = s.client.CoreV1().Pods(ns).Bind(ctx, &corev1.Binding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: pod.UID},
		Target:     corev1.ObjectReference{Kind: "Node", Name: node},
	}, metav1.CreateOptions{})
	if err != nil {
		s.mu.Lock()
		delete(s.assumed, pod.UID)
		s.mu.Unlock()
		if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
			return nil // gone, or bound by someone else: the informer will say
		}
		return fmt.Errorf("bind %s to %s: %w", key, node, err)
	}
	s.recorder.Eventf(pod, corev1.EventTypeNormal, "Scheduled", "Successfully assigned %s/%s to %s", ns, name, node)
	return nil
}

func (s *scheduler) nodeCount() int {
	nodes, _ := s.nodes.List(labelsEverything)
	return len(nodes)
}

// pick filters and scores the nodes; node is "" when none fits, and why
// says what stopped them.
func (s *scheduler) pick(pod *corev1.Pod) (node, why string, err error) {
	nodes, err := s.nodes.List(labelsEverything)
	if err != nil {
		return "", "", err
	}
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].Name < nodes[j].Name })
	want := podRequests(pod)
	affinity := nodeaffinity.GetRequiredNodeAffinity(pod)
	best, bestScore := "", -1.0
	reasons := map[string]int{}
	for _, n := range nodes {
		if ok, _ := affinity.Match(n); !ok {
			reasons["node(s) didn't match Pod's node affinity/selector"]++
			continue
		}
		if untolerated(pod, n) {
			reasons["node(s) had untolerated taint"]++
			continue
		}
		used, count := s.usage(n.Name)
		alloc := n.Status.Allocatable
		if count+1 > alloc.Pods().Value() {
			reasons["Too many pods"]++
			continue
		}
		cpu := used.Cpu().MilliValue() + want.Cpu().MilliValue()
		mem := used.Memory().Value() + want.Memory().Value()
		if cpu > alloc.Cpu().MilliValue() {
			reasons["Insufficient cpu"]++
			continue
		}
		if mem > alloc.Memory().Value() {
			reasons["Insufficient memory"]++
			continue
		}
		// NodeResourcesFit's LeastAllocated score, plus a tie-break on
		// the pod count so that request-less pods spread too.
		score := 2 - float64(cpu)/float64(alloc.Cpu().MilliValue()) - float64(mem)/float64(alloc.Memory().Value()) - float64(count)/1000
		if score > bestScore {
			best, bestScore = n.Name, score
		}
	}
	if best != "" {
		return best, "", nil
	}
	var parts []string
	for r, n := range reasons {
		parts = append(parts, fmt.Sprintf("%d %s", n, r))
	}
	sort.Strings(parts)
	if len(parts) == 0 {
		parts = []string{"no nodes registered"}
	}
	return "", fmt.Sprint(parts), nil
}

// usage sums the requests of the pods on node, bound or assumed.
func (s *scheduler) usage(node string) (corev1.ResourceList, int64) {
	used := corev1.ResourceList{corev1.ResourceCPU: resource.Quantity{}, corev1.ResourceMemory: resource.Quantity{}}
	var count int64
	add := func(p *corev1.Pod) {
		for name, q := range podRequests(p) {
			sum := used[name]
			sum.Add(q)
			used[name] = sum
		}
		count++
	}
	pods, _ := s.pods.List(labelsEverything)
	for _, p := range pods {
		if p.Spec.NodeName == node && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			add(p)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, a := range s.assumed {
		if a.node == node {
			add(a.pod)
		}
	}
	return used, count
}

func podRequests(p *corev1.Pod) corev1.ResourceList {
	out := corev1.ResourceList{}
	for _, c := range p.Spec.Containers {
		for name, q := range c.Resources.Requests {
			sum := out[name]
			sum.Add(q)
			out[name] = sum
		}
	}
	return out
}

func untolerated(pod *corev1.Pod, n *corev1.Node) bool {
	for _, t := range n.Spec.Taints {
		if t.Effect != corev1.TaintEffectNoSchedule && t.Effect != corev1.TaintEffectNoExecute {
			continue
		}
		tolerated := false
		for _, tol := range pod.Spec.Tolerations {
			if tol.ToleratesTaint(klog.Background(), &t, false) {
				tolerated = true
				break
			}
		}
		if !tolerated {
			return true
		}
	}
	return false
}

// markUnschedulable sets the PodScheduled condition as kube-scheduler does
// when no node fits.
func (s *scheduler) markUnschedulable(ctx context.Context, pod *corev1.Pod, why string) error {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Message == why {
			return fmt.Errorf("%s/%s is unschedulable: %s", pod.Namespace, pod.Name, why) // requeue with backoff
		}
	}
	p := pod.DeepCopy()
	setCondition(&p.Status, corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
		Reason: corev1.PodReasonUnschedulable, Message: why, LastTransitionTime: metav1.Now()})
	if _, err := s.client.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		return err
	}
	return fmt.Errorf("%s/%s is unschedulable: %s", pod.Namespace, pod.Name, why)
}
