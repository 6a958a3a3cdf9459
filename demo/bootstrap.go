package demo

import (
	"context"
	"fmt"

	"github.com/etcdscope/etcdscope/decode"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// kube-dns's address is the tenth of the service range, kubeadm's default.
const (
	kubeDNSServiceIP = "10.96.0.10"
	storageClassName = "standard"
	csiDriver        = "csi.demo.etcdscope.io"
)

// bootstrap creates what kubeadm init and the addons leave in a fresh
// cluster beyond what kube-apiserver makes itself (the system namespaces,
// the kubernetes Service and its endpoints, the bootstrap RBAC policy),
// where absent: CoreDNS, kube-proxy, the default StorageClass and its CSI
// driver, and the RBAC objects that bind them. The default ServiceAccounts
// are left to the serviceaccount controller, as in a real cluster.
func bootstrap(ctx context.Context, c kubernetes.Interface, more []createStep) error {
	for _, step := range append(bootstrapObjects(), more...) {
		if err := step.create(ctx, c); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create %s: %w", step.what, err)
		}
	}
	return nil
}

type createStep struct {
	what   string
	create func(ctx context.Context, c kubernetes.Interface) error
}

func create[T any](what string, fn func(ctx context.Context, c kubernetes.Interface) (T, error)) createStep {
	return createStep{what, func(ctx context.Context, c kubernetes.Interface) error {
		_, err := fn(ctx, c)
		return err
	}}
}

var co = metav1.CreateOptions{FieldManager: "kubeadm"}

// createService creates svc where absent. It looks first: a Service whose
// fixed cluster IP is taken, as it is when the Service exists (a kept
// --data-dir), is refused as Invalid, not AlreadyExists, because
// kube-apiserver allocates the IP before it stores the object (beginCreate
// in pkg/registry/core/service/storage).
func createService(ns string, svc *corev1.Service) createStep {
	return createStep{"service " + ns + "/" + svc.Name, func(ctx context.Context, c kubernetes.Interface) error {
		_, err := c.CoreV1().Services(ns).Get(ctx, svc.Name, metav1.GetOptions{})
		if !apierrors.IsNotFound(err) {
			return err
		}
		_, err = c.CoreV1().Services(ns).Create(ctx, svc, co)
		return err
	}}
}

func bootstrapObjects() []createStep {
	steps := []createStep{
		create("storageclass standard", func(ctx context.Context, c kubernetes.Interface) (*storagev1.StorageClass, error) {
			return c.StorageV1().StorageClasses().Create(ctx, &storagev1.StorageClass{
				ObjectMeta:        metav1.ObjectMeta{Name: storageClassName, Annotations: map[string]string{"storageclass.kubernetes.io/is-default-class": "true"}},
				Provisioner:       csiDriver,
				ReclaimPolicy:     ptr.To(corev1.PersistentVolumeReclaimDelete),
				VolumeBindingMode: ptr.To(storagev1.VolumeBindingImmediate),
			}, co)
		}),
		create("csidriver "+csiDriver, func(ctx context.Context, c kubernetes.Interface) (*storagev1.CSIDriver, error) {
			return c.StorageV1().CSIDrivers().Create(ctx, &storagev1.CSIDriver{
				ObjectMeta: metav1.ObjectMeta{Name: csiDriver},
				Spec:       storagev1.CSIDriverSpec{AttachRequired: ptr.To(false), PodInfoOnMount: ptr.To(false)},
			}, co)
		}),
		create("serviceaccount kube-system/csi-provisioner", func(ctx context.Context, c kubernetes.Interface) (*corev1.ServiceAccount, error) {
			return c.CoreV1().ServiceAccounts("kube-system").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "csi-provisioner"}}, co)
		}),
	}
	steps = append(steps, coreDNSObjects()...)
	steps = append(steps, kubeProxyObjects()...)
	return append(steps, rbacObjects()...)
}

const corefile = `.:53 {
    errors
    health {
       lameduck 5s
    }
    ready
    kubernetes cluster.local in-addr.arpa ip6.arpa {
       pods insecure
       fallthrough in-addr.arpa ip6.arpa
       ttl 30
    }
    prometheus :9153
    forward . /etc/resolv.conf {
       max_concurrent 1000
    }
    cache 30
    loop
    reload
    loadbalance
}
`

func coreDNSObjects() []createStep {
	labels := map[string]string{"k8s-app": "kube-dns"}
	return []createStep{
		create("serviceaccount kube-system/coredns", func(ctx context.Context, c kubernetes.Interface) (*corev1.ServiceAccount, error) {
			return c.CoreV1().ServiceAccounts("kube-system").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "coredns"}}, co)
		}),
		create("configmap kube-system/coredns", func(ctx context.Context, c kubernetes.Interface) (*corev1.ConfigMap, error) {
			return c.CoreV1().ConfigMaps("kube-system").Create(ctx, &corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Name: "coredns"}, Data: map[string]string{"Corefile": corefile},
			}, co)
		}),
		create("deployment kube-system/coredns", func(ctx context.Context, c kubernetes.Interface) (*appsv1.Deployment, error) {
			return c.AppsV1().Deployments("kube-system").Create(ctx, &appsv1.Deployment{
				ObjectMeta: metav1.ObjectMeta{Name: "coredns", Labels: labels},
				Spec: appsv1.DeploymentSpec{
					Replicas: ptr.To[int32](2),
					Selector: &metav1.LabelSelector{MatchLabels: labels},
					Strategy: appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType, RollingUpdate: &appsv1.RollingUpdateDeployment{
						MaxUnavailable: ptr.To(intstr.FromInt32(1)), MaxSurge: ptr.To(intstr.FromString("25%")),
					}},
					Template: corev1.PodTemplateSpec{
						ObjectMeta: metav1.ObjectMeta{Labels: labels},
						Spec: corev1.PodSpec{
							ServiceAccountName: "coredns", PriorityClassName: "system-cluster-critical", DNSPolicy: corev1.DNSDefault,
							Tolerations: []corev1.Toleration{{Key: "CriticalAddonsOnly", Operator: corev1.TolerationOpExists},
								{Key: "node-role.kubernetes.io/control-plane", Effect: corev1.TaintEffectNoSchedule}},
							Containers: []corev1.Container{{
								Name: "coredns", Image: "registry.k8s.io/coredns/coredns:v1.12.1", Args: []string{"-conf", "/etc/coredns/Corefile"},
								Ports: []corev1.ContainerPort{{Name: "dns", ContainerPort: 53, Protocol: corev1.ProtocolUDP},
									{Name: "dns-tcp", ContainerPort: 53, Protocol: corev1.ProtocolTCP}, {Name: "metrics", ContainerPort: 9153, Protocol: corev1.ProtocolTCP}},
								Resources: corev1.ResourceRequirements{
									Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("70Mi")},
									Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("170Mi")},
								},
								VolumeMounts: []corev1.VolumeMount{{Name: "config-volume", MountPath: "/etc/coredns", ReadOnly: true}},
							}},
							Volumes: []corev1.Volume{{Name: "config-volume", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
								LocalObjectReference: corev1.LocalObjectReference{Name: "coredns"},
								Items:                []corev1.KeyToPath{{Key: "Corefile", Path: "Corefile"}},
							}}}},
						},
					},
				},
			}, co)
		}),
		createService("kube-system", &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: "kube-dns", Labels: map[string]string{"k8s-app": "kube-dns", "kubernetes.io/name": "CoreDNS"},
				Annotations: map[string]string{"prometheus.io/port": "9153", "prometheus.io/scrape": "true"}},
			Spec: corev1.ServiceSpec{
				Selector: labels, ClusterIP: kubeDNSServiceIP, ClusterIPs: []string{kubeDNSServiceIP},
				Ports: []corev1.ServicePort{
					{Name: "dns", Port: 53, Protocol: corev1.ProtocolUDP, TargetPort: intstr.FromInt32(53)},
					{Name: "dns-tcp", Port: 53, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(53)},
					{Name: "metrics", Port: 9153, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(9153)},
				},
			},
		}),
	}
}

const kubeProxyConfig = `apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clusterCIDR: 10.244.0.0/16
mode: iptables
`

func kubeProxyObjects() []createStep {
	labels := map[string]string{"k8s-app": "kube-proxy"}
	return []createStep{
		create("serviceaccount kube-system/kube-proxy", func(ctx context.Context, c kubernetes.Interface) (*corev1.ServiceAccount, error) {
			return c.CoreV1().ServiceAccounts("kube-system").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "kube-proxy"}}, co)
		}),
		create("configmap kube-system/kube-proxy", func(ctx context.Context, c kubernetes.Interface) (*corev1.ConfigMap, error) {
			return c.CoreV1().ConfigMaps("kube-system").Create(ctx, &corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Name: "kube-proxy", Labels: map[string]string{"app": "kube-proxy"}},
				Data:       map[string]string{"config.conf": kubeProxyConfig},
			}, co)
		}),
		create("daemonset kube-system/kube-proxy", func(ctx context.Context, c kubernetes.Interface) (*appsv1.DaemonSet, error) {
			return c.AppsV1().DaemonSets("kube-system").Create(ctx, &appsv1.DaemonSet{
				ObjectMeta: metav1.ObjectMeta{Name: "kube-proxy", Labels: labels},
				Spec: appsv1.DaemonSetSpec{
					Selector: &metav1.LabelSelector{MatchLabels: labels},
					Template: corev1.PodTemplateSpec{
						ObjectMeta: metav1.ObjectMeta{Labels: labels},
						Spec: corev1.PodSpec{
							ServiceAccountName: "kube-proxy", HostNetwork: true, PriorityClassName: "system-node-critical",
							NodeSelector: map[string]string{"kubernetes.io/os": "linux"},
							Tolerations:  []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
							Containers: []corev1.Container{{
								Name: "kube-proxy", Image: "registry.k8s.io/kube-proxy:" + decode.KubernetesVersion,
								Command: []string{"/usr/local/bin/kube-proxy", "--config=/var/lib/kube-proxy/config.conf", "--hostname-override=$(NODE_NAME)"},
								Env: []corev1.EnvVar{{Name: "NODE_NAME", ValueFrom: &corev1.EnvVarSource{
									FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "spec.nodeName"}}}},
								VolumeMounts: []corev1.VolumeMount{{Name: "kube-proxy", MountPath: "/var/lib/kube-proxy"}},
							}},
							Volumes: []corev1.Volume{{Name: "kube-proxy", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
								LocalObjectReference: corev1.LocalObjectReference{Name: "kube-proxy"}}}}},
						},
					},
				},
			}, co)
		}),
	}
}

// rbacObjects are the bindings kubeadm makes for its addons and its admins,
// and the CSI provisioner's, with the cluster roles the bootstrap policy
// lacks.
func rbacObjects() []createStep {
	role := func(name string, rules ...rbacv1.PolicyRule) createStep {
		return create("clusterrole "+name, func(ctx context.Context, c kubernetes.Interface) (*rbacv1.ClusterRole, error) {
			return c.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name,
				Labels: map[string]string{"kubernetes.io/bootstrapping": "rbac-defaults"}}, Rules: rules}, co)
		})
	}
	binding := func(name, roleName string, subject rbacv1.Subject) createStep {
		return create("clusterrolebinding "+name, func(ctx context.Context, c kubernetes.Interface) (*rbacv1.ClusterRoleBinding, error) {
			return c.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
				ObjectMeta: metav1.ObjectMeta{Name: name},
				RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: roleName},
				Subjects:   []rbacv1.Subject{subject},
			}, co)
		})
	}
	read := []string{"get", "list", "watch"}
	return []createStep{
		role("system:coredns",
			rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"endpoints", "services", "pods", "namespaces"}, Verbs: []string{"list", "watch"}},
			rbacv1.PolicyRule{APIGroups: []string{"discovery.k8s.io"}, Resources: []string{"endpointslices"}, Verbs: []string{"list", "watch"}}),
		// The external-provisioner's role, as its deploy/kubernetes/rbac.yaml has it.
		role("external-provisioner-runner",
			rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"persistentvolumes"}, Verbs: []string{"get", "list", "watch", "create", "patch", "delete"}},
			rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"persistentvolumeclaims"}, Verbs: []string{"get", "list", "watch", "update"}},
			rbacv1.PolicyRule{APIGroups: []string{"storage.k8s.io"}, Resources: []string{"storageclasses", "csinodes"}, Verbs: read},
			rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: read},
			rbacv1.PolicyRule{APIGroups: []string{"", "events.k8s.io"}, Resources: []string{"events"}, Verbs: []string{"list", "watch", "create", "update", "patch"}}),
		binding("kubeadm:cluster-admins", "cluster-admin", rbacv1.Subject{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: "kubeadm:cluster-admins"}),
		binding("system:coredns", "system:coredns", rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: "coredns", Namespace: "kube-system"}),
		binding("kubeadm:node-proxier", "system:node-proxier", rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: "kube-proxy", Namespace: "kube-system"}),
		binding("csi-provisioner-role", "external-provisioner-runner", rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: "csi-provisioner", Namespace: "kube-system"}),
	}
}
