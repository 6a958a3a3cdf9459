package demo

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// pace is how often a step of the script runs, and in how many namespaces
// at once the script runs.
func pace(p Profile) (every time.Duration, lanes, replicas int) {
	if p == Busy {
		return 250 * time.Millisecond, 3, 6
	}
	return 3 * time.Second, 1, 3
}

// runScript is a user at work, on a timer: in a fresh namespace a
// Deployment with its Service and ConfigMap, a StatefulSet with a volume
// per replica, a crashing Deployment; then a scale, a rollout, a deleted
// pod, a ConfigMap edit, a Job, a Cart (a custom resource), and two
// writes admission refuses (a forbidden image, too many replicas); then
// the namespace of the cycle before is deleted, and the next cycle starts.
func runScript(ctx context.Context, c clients, p Profile) error {
	client, err := c.forUser(ScriptUser, "kubectl")
	if err != nil {
		return err
	}
	dyn, err := dynamic.NewForConfig(c.restFor(ScriptUser, "kubectl"))
	if err != nil {
		return err
	}
	every, lanes, replicas := pace(p)
	tick := time.NewTicker(every)
	defer tick.Stop()
	steps := scriptSteps(replicas, dyn)
	cycles := make([]int, lanes) // each lane's cycle number
	for l := range cycles {
		cycles[l] = l * 1000
	}
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		lane := i % lanes
		step := (i / lanes) % len(steps)
		ns := fmt.Sprintf("shop-%d", cycles[lane])
		// A step that fails (a conflict, a namespace still terminating)
		// is skipped: the next cycle does it again.
		if steps[step] != nil {
			_ = steps[step](ctx, client, ns, cycles[lane])
		}
		if step == len(steps)-1 {
			cycles[lane]++
		}
	}
}

type scriptStep func(ctx context.Context, c kubernetes.Interface, ns string, cycle int) error

func scriptSteps(replicas int, dyn dynamic.Interface) []scriptStep {
	steps := workloadSteps(replicas)
	// Before the pauses and the namespace deletion at the end.
	at := len(steps) - 3
	return append(steps[:at:at], append(platformSteps(dyn), steps[at:]...)...)
}

// platformSteps are the writes of the platform team's additions: a Cart,
// and two writes admission refuses, for the write path to show: a Pod of
// the image the webhook forbids, and more replicas than the
// ValidatingAdmissionPolicy allows.
func platformSteps(dyn dynamic.Interface) []scriptStep {
	return []scriptStep{
		func(ctx context.Context, _ kubernetes.Interface, ns string, cycle int) error {
			return createCart(ctx, dyn, ns, cycle)
		},
		func(ctx context.Context, c kubernetes.Interface, ns string, _ int) error {
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "miner"},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "miner", Image: ForbiddenImage}}}}
			_, err := c.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
			return err
		},
		func(ctx context.Context, c kubernetes.Interface, ns string, _ int) error {
			_, err := c.AppsV1().Deployments(ns).Patch(ctx, "web", types.MergePatchType,
				fmt.Appendf(nil, `{"spec":{"replicas":%d}}`, 10*MaxReplicas), metav1.PatchOptions{})
			return err
		},
	}
}

// workloadSteps are a user's work on their application, a cycle long.
func workloadSteps(replicas int) []scriptStep {
	return []scriptStep{
		func(ctx context.Context, c kubernetes.Interface, ns string, _ int) error {
			_, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
			if err != nil {
				return err
			}
			if _, err := c.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "web-config"},
				Data: map[string]string{"greeting": "hello"}}, metav1.CreateOptions{}); err != nil {
				return err
			}
			if _, err := c.AppsV1().Deployments(ns).Create(ctx, WebDeployment(ns, "web", int32(replicas), "nginx:1.27"), metav1.CreateOptions{}); err != nil {
				return err
			}
			_, err = c.CoreV1().Services(ns).Create(ctx, WebService(ns, "web"), metav1.CreateOptions{})
			return err
		},
		func(ctx context.Context, c kubernetes.Interface, ns string, _ int) error {
			_, err := c.AppsV1().StatefulSets(ns).Create(ctx, dbStatefulSet(ns), metav1.CreateOptions{})
			return err
		},
		func(ctx context.Context, c kubernetes.Interface, ns string, _ int) error {
			d := WebDeployment(ns, "flaky", 1, "busybox:1.37")
			d.Spec.Template.Annotations = map[string]string{crashAfterAnnotation: "10s"}
			_, err := c.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{})
			return err
		},
		func(ctx context.Context, c kubernetes.Interface, ns string, _ int) error {
			_, err := c.AppsV1().Deployments(ns).Patch(ctx, "web", types.MergePatchType,
				fmt.Appendf(nil, `{"spec":{"replicas":%d}}`, replicas+2), metav1.PatchOptions{})
			return err
		},
		func(ctx context.Context, c kubernetes.Interface, ns string, _ int) error {
			_, err := c.AppsV1().Deployments(ns).Patch(ctx, "web", types.StrategicMergePatchType,
				[]byte(`{"spec":{"template":{"spec":{"containers":[{"name":"web","image":"nginx:1.28"}]}}}}`), metav1.PatchOptions{})
			return err
		},
		func(ctx context.Context, c kubernetes.Interface, ns string, _ int) error {
			pods, err := c.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
			if err != nil || len(pods.Items) == 0 {
				return err
			}
			return c.CoreV1().Pods(ns).Delete(ctx, pods.Items[0].Name, metav1.DeleteOptions{})
		},
		func(ctx context.Context, c kubernetes.Interface, ns string, cycle int) error {
			_, err := c.CoreV1().ConfigMaps(ns).Patch(ctx, "web-config", types.MergePatchType,
				fmt.Appendf(nil, `{"data":{"greeting":"hello from cycle %d"}}`, cycle), metav1.PatchOptions{})
			return err
		},
		func(ctx context.Context, c kubernetes.Interface, ns string, _ int) error {
			_, err := c.BatchV1().Jobs(ns).Create(ctx, reportJob(), metav1.CreateOptions{})
			return err
		},
		nil, // a pause while the Job runs
		nil,
		func(ctx context.Context, c kubernetes.Interface, ns string, cycle int) error {
			if cycle%1000 == 0 {
				return nil
			}
			err := c.CoreV1().Namespaces().Delete(ctx, fmt.Sprintf("shop-%d", cycle-1), metav1.DeleteOptions{})
			if apierrors.IsNotFound(err) {
				return nil
			}
			return err
		},
	}
}

// WebDeployment is an nginx Deployment as a user would write it; tests
// use it too.
func WebDeployment(ns, name string, replicas int32, image string) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: name, Image: image, Ports: []corev1.ContainerPort{{ContainerPort: 80}},
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
						corev1.ResourceCPU: resource.MustParse("50m"), corev1.ResourceMemory: resource.MustParse("64Mi")}},
				}}},
			},
		},
	}
}

// WebService selects WebDeployment's pods.
func WebService(ns, name string) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": name},
			Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(80), Protocol: corev1.ProtocolTCP}}},
	}
}

// dbStatefulSet has a volume per replica from its volumeClaimTemplates.
func dbStatefulSet(ns string) *appsv1.StatefulSet {
	labels := map[string]string{"app": "db"}
	return &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db"},
		Spec: appsv1.StatefulSetSpec{
			Replicas: ptr.To[int32](2), ServiceName: "db",
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "db", Image: "postgres:17",
					VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/var/lib/postgresql/data"}},
				}}},
			},
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{
				ObjectMeta: metav1.ObjectMeta{Name: "data"},
				Spec: corev1.PersistentVolumeClaimSpec{
					AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}, StorageClassName: ptr.To(storageClassName),
					Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
				},
			}},
		},
	}
}

func reportJob() *batchv1.Job {
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "report"},
		Spec: batchv1.JobSpec{
			Completions: ptr.To[int32](2), Parallelism: ptr.To[int32](2),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers:    []corev1.Container{{Name: "report", Image: "busybox:1.37", Command: []string{"sh", "-c", "echo done"}}},
			}},
		},
	}
}
