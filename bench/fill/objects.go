package fill

import (
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

// The objects below are what a busy cluster's controllers write: sizes and
// fields close to what kube-apiserver stores for each kind (a Pod of about
// 1.5 KiB, an Event of about 500 bytes), deterministic so that two fills of
// the same size hold the same bytes.

// epoch is every object's creation time: fixed so fills are reproducible.
var epoch = metav1.NewTime(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))

func objectMeta(ns, name string, i int) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name:              name,
		Namespace:         ns,
		UID:               types.UID(fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i)),
		CreationTimestamp: epoch,
		Labels:            map[string]string{"app": fmt.Sprintf("app-%d", i%97), "team": fmt.Sprintf("team-%d", i%13)},
	}
}

func owner(kind, name string, i int) []metav1.OwnerReference {
	yes := true
	return []metav1.OwnerReference{{
		APIVersion: "apps/v1", Kind: kind, Name: name, Controller: &yes, BlockOwnerDeletion: &yes,
		UID: types.UID(fmt.Sprintf("%08x-1111-4000-8000-%012x", i, i)),
	}}
}

func pod(ns string, i int, node string) runtime.Object {
	rs := fmt.Sprintf("web-%d-7d4b9c8f6d", i/10)
	p := &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: objectMeta(ns, fmt.Sprintf("%s-%05d", rs, i), i),
		Spec: corev1.PodSpec{
			NodeName:           node,
			ServiceAccountName: "default",
			Containers: []corev1.Container{{
				Name:  "app",
				Image: fmt.Sprintf("registry.example.com/team-%d/app:v1.%d.0", i%13, i%7),
				Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}},
				Env:   []corev1.EnvVar{{Name: "LOG_LEVEL", Value: "info"}, {Name: "POD_NAMESPACE", Value: ns}},
				Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
					Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")},
				},
				VolumeMounts:             []corev1.VolumeMount{{Name: "kube-api-access", MountPath: "/var/run/secrets/kubernetes.io/serviceaccount", ReadOnly: true}},
				TerminationMessagePath:   "/dev/termination-log",
				TerminationMessagePolicy: corev1.TerminationMessageReadFile,
				ImagePullPolicy:          corev1.PullIfNotPresent,
			}},
			Volumes:       []corev1.Volume{{Name: "kube-api-access", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token"}}}}}}},
			RestartPolicy: corev1.RestartPolicyAlways,
			DNSPolicy:     corev1.DNSClusterFirst,
			SchedulerName: "default-scheduler",
		},
		Status: corev1.PodStatus{
			Phase:      corev1.PodRunning,
			HostIP:     fmt.Sprintf("10.0.%d.%d", i/250%250, i%250),
			PodIP:      fmt.Sprintf("10.%d.%d.%d", 64+i/62500%64, i/250%250, i%250),
			StartTime:  &epoch,
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: epoch}, {Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: epoch}},
			ContainerStatuses: []corev1.ContainerStatus{{
				Name: "app", Ready: true, Image: fmt.Sprintf("registry.example.com/team-%d/app:v1.%d.0", i%13, i%7),
				ImageID:     fmt.Sprintf("registry.example.com/team-%d/app@sha256:%064x", i%13, i%7),
				ContainerID: fmt.Sprintf("containerd://%064x", i),
				State:       corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: epoch}},
			}},
			QOSClass: corev1.PodQOSBurstable,
		},
	}
	p.OwnerReferences = owner("ReplicaSet", rs, i)
	return p
}

func event(ns string, i int) runtime.Object {
	name := fmt.Sprintf("web-%d-7d4b9c8f6d-%05d", i/40, i/4)
	return &corev1.Event{
		TypeMeta:       metav1.TypeMeta{APIVersion: "v1", Kind: "Event"},
		ObjectMeta:     metav1.ObjectMeta{Name: fmt.Sprintf("%s.%016x", name, i), Namespace: ns, UID: types.UID(fmt.Sprintf("%08x-2222-4000-8000-%012x", i, i)), CreationTimestamp: epoch},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: name, APIVersion: "v1", FieldPath: "spec.containers{app}"},
		Reason:         []string{"Scheduled", "Pulling", "Pulled", "Created", "Started"}[i%5],
		Message:        fmt.Sprintf("Successfully assigned %s/%s to node-%04d", ns, name, i%5000),
		Source:         corev1.EventSource{Component: "kubelet", Host: fmt.Sprintf("node-%04d", i%5000)},
		FirstTimestamp: epoch, LastTimestamp: epoch, Count: 1, Type: corev1.EventTypeNormal,
		ReportingController: "kubelet", ReportingInstance: fmt.Sprintf("node-%04d", i%5000),
	}
}

func replicaSet(ns string, i int) runtime.Object {
	replicas := int32(3)
	labels := map[string]string{"app": fmt.Sprintf("web-%d", i/10), "pod-template-hash": "7d4b9c8f6d"}
	return &appsv1.ReplicaSet{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "ReplicaSet"},
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("web-%d-%010x", i/10, i), Namespace: ns, UID: types.UID(fmt.Sprintf("%08x-3333-4000-8000-%012x", i, i)), CreationTimestamp: epoch, Labels: labels, OwnerReferences: owner("Deployment", fmt.Sprintf("web-%d", i/10), i)},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: fmt.Sprintf("registry.example.com/team-%d/app:v1.%d.0", i%13, i%7)}}},
			},
		},
		Status: appsv1.ReplicaSetStatus{Replicas: replicas, ReadyReplicas: replicas, AvailableReplicas: replicas, FullyLabeledReplicas: replicas, ObservedGeneration: 1},
	}
}

func configMap(ns string, i int) runtime.Object {
	return &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: objectMeta(ns, fmt.Sprintf("config-%05d", i), i),
		Data: map[string]string{
			"app.properties": fmt.Sprintf("server.port=8080\nlog.level=info\nfeature.flags=a,b,c\ninstance=%d\n", i),
			"ca.crt":         fmt.Sprintf("-----BEGIN CERTIFICATE-----\n%0512x\n-----END CERTIFICATE-----\n", i),
		},
	}
}

func secret(ns string, i int) runtime.Object {
	return &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: objectMeta(ns, fmt.Sprintf("secret-%05d", i), i),
		Type:       corev1.SecretTypeOpaque,
		Data:       map[string][]byte{"password": fmt.Appendf(nil, "%032x", i), "token": fmt.Appendf(nil, "%0256x", i)},
	}
}

func endpointSlice(ns string, i int) runtime.Object {
	ready := true
	port, proto, pname := int32(8080), corev1.ProtocolTCP, "http"
	es := &discoveryv1.EndpointSlice{
		TypeMeta:    metav1.TypeMeta{APIVersion: "discovery.k8s.io/v1", Kind: "EndpointSlice"},
		ObjectMeta:  objectMeta(ns, fmt.Sprintf("svc-%d-%05x", i/2, i), i),
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: &pname, Port: &port, Protocol: &proto}},
	}
	for j := range 3 {
		node := fmt.Sprintf("node-%04d", (i+j)%5000)
		es.Endpoints = append(es.Endpoints, discoveryv1.Endpoint{
			Addresses:  []string{fmt.Sprintf("10.%d.%d.%d", 64+j, i/250%250, i%250)},
			Conditions: discoveryv1.EndpointConditions{Ready: &ready},
			NodeName:   &node,
		})
	}
	return es
}

func lease(ns, name string, i int) runtime.Object {
	holder, secs := name, int32(40)
	renew := metav1.NewMicroTime(epoch.Time)
	return &coordinationv1.Lease{
		TypeMeta:   metav1.TypeMeta{APIVersion: "coordination.k8s.io/v1", Kind: "Lease"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, UID: types.UID(fmt.Sprintf("%08x-4444-4000-8000-%012x", i, i)), CreationTimestamp: epoch},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &secs, RenewTime: &renew},
	}
}

func node(i int) runtime.Object {
	name := fmt.Sprintf("node-%04d", i)
	capacity := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("16"), corev1.ResourceMemory: resource.MustParse("64Gi"), corev1.ResourcePods: resource.MustParse("110")}
	return &corev1.Node{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Node"},
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(fmt.Sprintf("%08x-5555-4000-8000-%012x", i, i)), CreationTimestamp: epoch, Labels: map[string]string{"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": fmt.Sprintf("zone-%d", i%3)}},
		Spec:       corev1.NodeSpec{PodCIDR: fmt.Sprintf("10.%d.%d.0/24", 64+i/250, i%250), ProviderID: "example://" + name},
		Status: corev1.NodeStatus{
			Capacity: capacity, Allocatable: capacity,
			Conditions: []corev1.NodeCondition{
				{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", Message: "kubelet is posting ready status", LastHeartbeatTime: epoch, LastTransitionTime: epoch},
				{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasSufficientMemory", LastHeartbeatTime: epoch, LastTransitionTime: epoch},
				{Type: corev1.NodeDiskPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasNoDiskPressure", LastHeartbeatTime: epoch, LastTransitionTime: epoch},
			},
			Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: fmt.Sprintf("10.0.%d.%d", i/250, i%250)}, {Type: corev1.NodeHostName, Address: name}},
			NodeInfo:  corev1.NodeSystemInfo{KubeletVersion: "v1.33.1", ContainerRuntimeVersion: "containerd://1.7.27", OSImage: "Debian GNU/Linux 13", KernelVersion: "6.12.0", Architecture: "amd64", OperatingSystem: "linux"},
		},
	}
}

func namespace(name string, i int) runtime.Object {
	return &corev1.Namespace{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(fmt.Sprintf("%08x-6666-4000-8000-%012x", i, i)), CreationTimestamp: epoch, Labels: map[string]string{"kubernetes.io/metadata.name": name}},
		Spec:       corev1.NamespaceSpec{Finalizers: []corev1.FinalizerName{corev1.FinalizerKubernetes}},
		Status:     corev1.NamespaceStatus{Phase: corev1.NamespaceActive},
	}
}
