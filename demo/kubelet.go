package demo

import (
	"context"
	"crypto/sha256"
	"fmt"
	"sync"
	"time"

	"github.com/distribution/reference"
	"github.com/etcdscope/etcdscope/decode"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/component-helpers/apimachinery/lease"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
)

// The kubelet's timings: its node Lease (--node-lease-duration-seconds 40,
// renewed every 10 s), and how long the simulated runtime takes to create
// containers and to run a Job's pod to completion.
const (
	nodeLeaseDuration = 40
	nodeLeaseRenew    = 10 * time.Second
	containerCreating = 1500 * time.Millisecond
	jobRunsFor        = 4 * time.Second
	// crashAfterAnnotation makes a pod's containers crash (exit 1) after
	// running this long, and restart, as a broken image would.
	crashAfterAnnotation = "demo.etcdscope.io/crash-after"
)

// kubelet is one node's kubelet without a container runtime: it registers
// its Node, keeps its Lease, and writes the status a runtime would produce
// for the pods bound to it. Every transition is derived from the pod's
// stored status and the clock, so a restarted kubelet picks up where the
// last one stopped.
type kubelet struct {
	node     string
	index    int
	client   kubernetes.Interface
	pods     corelisters.PodLister
	queue    workqueue.TypedRateLimitingInterface[string]
	recorder record.EventRecorder

	mu  sync.Mutex
	ips map[types.UID]string
	// next is the last host part handed out in the node's pod CIDR.
	next int
}

func (d *Demo) runKubelet(ctx context.Context, c clients, node string, index int) error {
	client, err := c.forUser(nodeUser(node), "kubelet")
	if err != nil {
		return err
	}
	k := &kubelet{node: node, index: index, client: client, ips: map[types.UID]string{},
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "kubelet-" + node})}
	defer k.queue.ShutDown()
	if err := wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
		err := k.register(ctx)
		return err == nil, nil // the API server may be busy; a kubelet keeps trying
	}); err != nil {
		return nil
	}
	broadcaster := newBroadcaster(ctx)
	defer broadcaster.Shutdown()
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: client.CoreV1().Events("")})
	k.recorder = broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "kubelet", Host: node})

	leases := lease.NewController(clock.RealClock{}, client, node, nodeLeaseDuration, nil, nodeLeaseRenew,
		node, corev1.NamespaceNodeLease, k.setNodeOwner(ctx))
	// The kubelet watches only the pods bound to it.
	f := informers.NewSharedInformerFactoryWithOptions(client, resync, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.FieldSelector = fields.OneTermEqualSelector("spec.nodeName", node).String()
	}))
	defer f.Shutdown()
	podInf := f.Core().V1().Pods().Informer()
	k.pods = f.Core().V1().Pods().Lister()
	d.observe("kubelet "+node, "pods", podInf, nil)
	_, _ = podInf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    k.enqueue,
		UpdateFunc: func(_, obj any) { k.enqueue(obj) },
		DeleteFunc: k.enqueue,
	})
	f.Start(ctx.Done())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		leases.Run(ctx)
	}()
	if cache.WaitForCacheSync(ctx.Done(), podInf.HasSynced) {
		for range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				wait.UntilWithContext(ctx, k.worker, time.Second)
			}()
		}
	}
	<-ctx.Done()
	k.queue.ShutDown()
	wg.Wait()
	return nil
}

// setNodeOwner makes the Node own its Lease, as the kubelet's
// SetNodeOwnerFunc does, so that deleting the Node collects the Lease.
func (k *kubelet) setNodeOwner(ctx context.Context) lease.ProcessLeaseFunc {
	return func(l *coordinationv1.Lease) error {
		if len(l.OwnerReferences) > 0 {
			return nil
		}
		n, err := k.client.CoreV1().Nodes().Get(ctx, k.node, metav1.GetOptions{})
		if err != nil {
			return err
		}
		l.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: k.node, UID: n.UID}}
		return nil
	}
}

func (k *kubelet) podCIDR() string { return fmt.Sprintf("10.244.%d.0/24", k.index) }
func (k *kubelet) hostIP() string  { return fmt.Sprintf("172.18.0.%d", k.index+2) }

// register creates the Node as the kubelet's registerWithAPIServer does:
// labels, capacity, addresses, node info, and Ready conditions.
func (k *kubelet) register(ctx context.Context) error {
	now := metav1.Now()
	capacity := corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi"),
		corev1.ResourcePods: resource.MustParse("110"), corev1.ResourceEphemeralStorage: resource.MustParse("100Gi"),
	}
	allocatable := capacity.DeepCopy()
	allocatable[corev1.ResourceMemory] = resource.MustParse("7800Mi")
	cond := func(t corev1.NodeConditionType, s corev1.ConditionStatus, reason, msg string) corev1.NodeCondition {
		return corev1.NodeCondition{Type: t, Status: s, Reason: reason, Message: msg, LastHeartbeatTime: now, LastTransitionTime: now}
	}
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: k.node, Labels: map[string]string{
			"kubernetes.io/hostname": k.node, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
			"beta.kubernetes.io/os": "linux", "beta.kubernetes.io/arch": "amd64",
		}, Annotations: map[string]string{
			"node.alpha.kubernetes.io/ttl":                           "0",
			"volumes.kubernetes.io/controller-managed-attach-detach": "true",
		}},
		Spec: corev1.NodeSpec{PodCIDR: k.podCIDR(), PodCIDRs: []string{k.podCIDR()}},
		Status: corev1.NodeStatus{
			Capacity: capacity, Allocatable: allocatable, Phase: "",
			Conditions: []corev1.NodeCondition{
				cond(corev1.NodeMemoryPressure, corev1.ConditionFalse, "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
				cond(corev1.NodeDiskPressure, corev1.ConditionFalse, "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
				cond(corev1.NodePIDPressure, corev1.ConditionFalse, "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
				cond(corev1.NodeReady, corev1.ConditionTrue, "KubeletReady", "kubelet is posting ready status"),
			},
			Addresses:       []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: k.hostIP()}, {Type: corev1.NodeHostName, Address: k.node}},
			DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: 10250}},
			NodeInfo: corev1.NodeSystemInfo{
				MachineID: fmt.Sprintf("%032x", k.index+1), SystemUUID: fmt.Sprintf("%032x", k.index+1), BootID: fmt.Sprintf("%032x", k.index+1),
				KernelVersion: "6.8.0-etcdscope", OSImage: "Debian GNU/Linux 13 (trixie)", ContainerRuntimeVersion: "containerd://2.1.0",
				KubeletVersion: decode.KubernetesVersion, OperatingSystem: "linux", Architecture: "amd64",
			},
		},
	}
	_, err := k.client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	if err != nil {
		return err
	}
	// The Node's status as created is dropped by the API server (status is
	// a subresource); the kubelet reports it right after registering.
	cur, err := k.client.CoreV1().Nodes().Get(ctx, k.node, metav1.GetOptions{})
	if err != nil {
		return err
	}
	cur.Status = node.Status
	_, err = k.client.CoreV1().Nodes().UpdateStatus(ctx, cur, metav1.UpdateOptions{})
	return err
}

func (k *kubelet) enqueue(obj any) {
	if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
		k.queue.Add(key)
	}
}

func (k *kubelet) worker(ctx context.Context) { work(ctx, k.queue, k.sync) }

// sync moves one pod a step; after > 0 asks to be called again then.
func (k *kubelet) sync(ctx context.Context, key string) (after time.Duration, err error) {
	ns, name, _ := cache.SplitMetaNamespaceKey(key)
	pod, err := k.pods.Pods(ns).Get(name)
	if apierrors.IsNotFound(err) {
		k.release()
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	if pod.DeletionTimestamp != nil {
		return 0, k.kill(ctx, pod)
	}
	if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return 0, nil
	}
	now := time.Now()
	if pod.Status.StartTime == nil {
		return containerCreating, k.write(ctx, pod, k.creatingStatus(pod, now))
	}
	if pod.Status.Phase == corev1.PodPending {
		if wait := pod.Status.StartTime.Add(containerCreating).Sub(now); wait > 0 {
			return wait, nil
		}
		bound, err := k.volumesBound(ctx, pod)
		if err != nil || !bound {
			return time.Second, err
		}
		for _, c := range pod.Spec.Containers {
			k.recorder.Eventf(pod, corev1.EventTypeNormal, "Pulled", "Container image %q already present on machine", c.Image)
			k.recorder.Eventf(pod, corev1.EventTypeNormal, "Created", "Created container: %s", c.Name)
			k.recorder.Eventf(pod, corev1.EventTypeNormal, "Started", "Started container %s", c.Name)
		}
		return k.nextCheck(pod, now), k.write(ctx, pod, k.runningStatus(pod, now))
	}
	return k.running(ctx, pod, now)
}

// running finishes a Job's pod after jobRunsFor, and restarts the
// containers of a pod made to crash.
func (k *kubelet) running(ctx context.Context, pod *corev1.Pod, now time.Time) (time.Duration, error) {
	started := runningSince(pod)
	if started.IsZero() {
		return 0, nil
	}
	if pod.Spec.RestartPolicy != corev1.RestartPolicyAlways {
		if wait := started.Add(jobRunsFor).Sub(now); wait > 0 {
			return wait, nil
		}
		return 0, k.write(ctx, pod, k.completedStatus(pod, now))
	}
	crashAfter, err := time.ParseDuration(pod.Annotations[crashAfterAnnotation])
	if err != nil || crashAfter <= 0 {
		return 0, nil
	}
	if wait := started.Add(crashAfter).Sub(now); wait > 0 {
		return wait, nil
	}
	st := pod.Status.DeepCopy()
	for i := range st.ContainerStatuses {
		cs := &st.ContainerStatuses[i]
		cs.LastTerminationState = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: 1, Reason: "Error", StartedAt: metav1.NewTime(started), FinishedAt: metav1.NewTime(now), ContainerID: cs.ContainerID,
		}}
		cs.RestartCount++
		cs.ContainerID = containerID(pod, cs.Name, cs.RestartCount)
		cs.State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(now)}}
		k.recorder.Eventf(pod, corev1.EventTypeWarning, "BackOff", "Back-off restarting failed container %s in pod %s_%s(%s)", cs.Name, pod.Name, pod.Namespace, pod.UID)
	}
	return crashAfter, k.write(ctx, pod, *st)
}

func (k *kubelet) nextCheck(pod *corev1.Pod, now time.Time) time.Duration {
	if pod.Spec.RestartPolicy != corev1.RestartPolicyAlways {
		return jobRunsFor
	}
	if d, err := time.ParseDuration(pod.Annotations[crashAfterAnnotation]); err == nil && d > 0 {
		return d
	}
	return 0
}

func runningSince(pod *corev1.Pod) time.Time {
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.State.Running != nil {
			return cs.State.Running.StartedAt.Time
		}
	}
	return time.Time{}
}

// write replaces the pod's status if it differs.
func (k *kubelet) write(ctx context.Context, pod *corev1.Pod, st corev1.PodStatus) error {
	p := pod.DeepCopy()
	p.Status = st
	_, err := k.client.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, p, metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// kill ends a pod that is being deleted: the containers stop (at once:
// nothing runs), then the kubelet removes the object, as its status
// manager does once a terminating pod's containers are gone.
func (k *kubelet) kill(ctx context.Context, pod *corev1.Pod) error {
	for _, c := range pod.Spec.Containers {
		k.recorder.Eventf(pod, corev1.EventTypeNormal, "Killing", "Stopping container %s", c.Name)
	}
	err := k.client.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{
		GracePeriodSeconds: ptr.To[int64](0), Preconditions: metav1.NewUIDPreconditions(string(pod.UID)),
	})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	return err
}

// volumesBound is true when every claim the pod mounts is bound; the
// kubelet's volume manager waits for that before the containers start.
func (k *kubelet) volumesBound(ctx context.Context, pod *corev1.Pod) (bool, error) {
	for _, v := range pod.Spec.Volumes {
		if v.PersistentVolumeClaim == nil {
			continue
		}
		pvc, err := k.client.CoreV1().PersistentVolumeClaims(pod.Namespace).Get(ctx, v.PersistentVolumeClaim.ClaimName, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		if pvc.Status.Phase != corev1.ClaimBound {
			return false, nil
		}
		if err := k.reportVolumeInUse(ctx, pvc.Spec.VolumeName); err != nil {
			return false, err
		}
	}
	return true, nil
}

// reportVolumeInUse adds the volume to the Node's status.volumesInUse, as
// the kubelet does before it mounts a CSI volume.
func (k *kubelet) reportVolumeInUse(ctx context.Context, pv string) error {
	name := corev1.UniqueVolumeName("kubernetes.io/csi/" + csiDriver + "^" + pv)
	node, err := k.client.CoreV1().Nodes().Get(ctx, k.node, metav1.GetOptions{})
	if err != nil {
		return err
	}
	for _, v := range node.Status.VolumesInUse {
		if v == name {
			return nil
		}
	}
	node.Status.VolumesInUse = append(node.Status.VolumesInUse, name)
	_, err = k.client.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{})
	return err
}

func (k *kubelet) ip(pod *corev1.Pod) string {
	k.mu.Lock()
	defer k.mu.Unlock()
	if ip, ok := k.ips[pod.UID]; ok {
		return ip
	}
	if pod.Status.PodIP != "" {
		k.ips[pod.UID] = pod.Status.PodIP
		return pod.Status.PodIP
	}
	used := map[string]bool{}
	for _, ip := range k.ips {
		used[ip] = true
	}
	for range 253 {
		k.next = k.next%253 + 1
		ip := fmt.Sprintf("10.244.%d.%d", k.index, k.next+1)
		if !used[ip] {
			k.ips[pod.UID] = ip
			return ip
		}
	}
	return ""
}

// release forgets the IPs of pods the kubelet no longer has.
func (k *kubelet) release() {
	pods, _ := k.pods.List(labelsEverything)
	live := map[types.UID]bool{}
	for _, p := range pods {
		live[p.UID] = true
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	for uid := range k.ips {
		if !live[uid] {
			delete(k.ips, uid)
		}
	}
}

func (k *kubelet) creatingStatus(pod *corev1.Pod, now time.Time) corev1.PodStatus {
	st := *pod.Status.DeepCopy()
	t := metav1.NewTime(now)
	st.Phase = corev1.PodPending
	st.HostIP, st.HostIPs = k.hostIP(), []corev1.HostIP{{IP: k.hostIP()}}
	st.StartTime = &t
	var names []string
	for _, c := range pod.Spec.Containers {
		names = append(names, c.Name)
	}
	notReady := fmt.Sprintf("containers with unready status: %v", names)
	setCondition(&st, corev1.PodCondition{Type: corev1.PodReadyToStartContainers, Status: corev1.ConditionFalse, LastTransitionTime: t})
	setCondition(&st, corev1.PodCondition{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: t})
	setCondition(&st, corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "ContainersNotReady", Message: notReady, LastTransitionTime: t})
	setCondition(&st, corev1.PodCondition{Type: corev1.ContainersReady, Status: corev1.ConditionFalse, Reason: "ContainersNotReady", Message: notReady, LastTransitionTime: t})
	setCondition(&st, corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: t})
	st.ContainerStatuses = nil
	for _, c := range pod.Spec.Containers {
		st.ContainerStatuses = append(st.ContainerStatuses, corev1.ContainerStatus{
			Name: c.Name, Image: c.Image, Started: ptr.To(false),
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}},
		})
	}
	return st
}

func (k *kubelet) runningStatus(pod *corev1.Pod, now time.Time) corev1.PodStatus {
	st := *pod.Status.DeepCopy()
	t := metav1.NewTime(now)
	ip := k.ip(pod)
	st.Phase = corev1.PodRunning
	st.PodIP, st.PodIPs = ip, []corev1.PodIP{{IP: ip}}
	for _, ct := range []corev1.PodConditionType{corev1.PodReadyToStartContainers, corev1.PodReady, corev1.ContainersReady} {
		setCondition(&st, corev1.PodCondition{Type: ct, Status: corev1.ConditionTrue, LastTransitionTime: t})
	}
	for i := range st.ContainerStatuses {
		cs := &st.ContainerStatuses[i]
		cs.Ready, cs.Started = true, ptr.To(true)
		cs.ImageID = imageID(cs.Image)
		cs.ContainerID = containerID(pod, cs.Name, cs.RestartCount)
		cs.State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: t}}
	}
	return st
}

func (k *kubelet) completedStatus(pod *corev1.Pod, now time.Time) corev1.PodStatus {
	st := *pod.Status.DeepCopy()
	t := metav1.NewTime(now)
	st.Phase = corev1.PodSucceeded
	for _, ct := range []corev1.PodConditionType{corev1.PodReadyToStartContainers, corev1.PodReady, corev1.ContainersReady} {
		setCondition(&st, corev1.PodCondition{Type: ct, Status: corev1.ConditionFalse, Reason: "PodCompleted", LastTransitionTime: t})
	}
	for i := range st.ContainerStatuses {
		cs := &st.ContainerStatuses[i]
		var started metav1.Time
		if cs.State.Running != nil {
			started = cs.State.Running.StartedAt
		}
		cs.Ready, cs.Started = false, ptr.To(false)
		cs.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: 0, Reason: "Completed", StartedAt: started, FinishedAt: t, ContainerID: cs.ContainerID,
		}}
	}
	return st
}

// imageID and containerID look like containerd's: digests derived from the
// image name, and from the pod, container and restart. containerd names an
// image by its normalised repository (docker.io/library/ before an image of
// Docker Hub's library, nothing before one with a registry host) and the
// digest it pulled, which an image pinned by digest already says.
func imageID(image string) string {
	named, err := reference.ParseNormalizedNamed(image)
	if err != nil {
		// The API server admitted it; containerd would refuse to pull it.
		return fmt.Sprintf("%s@sha256:%x", image, sha256.Sum256([]byte(image)))
	}
	if d, ok := named.(reference.Digested); ok {
		return reference.TrimNamed(named).Name() + "@" + d.Digest().String()
	}
	return fmt.Sprintf("%s@sha256:%x", named.Name(), sha256.Sum256([]byte(image)))
}

func containerID(pod *corev1.Pod, name string, restart int32) string {
	return fmt.Sprintf("containerd://%x", sha256.Sum256(fmt.Appendf(nil, "%s/%s/%d", pod.UID, name, restart)))
}
