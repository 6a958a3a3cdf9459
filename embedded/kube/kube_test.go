package kube

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/etcdscope/etcdscope/decode"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/server/options/encryptionconfig"
	serverstorage "k8s.io/apiserver/pkg/server/storage"
	storagevalue "k8s.io/apiserver/pkg/storage/value"
	"k8s.io/client-go/kubernetes/scheme"
)

// manifests is an ordinary application, with an object in every group an
// application touches: a CRD and a custom resource of it, a Deployment, a
// Service, an Ingress, a PodDisruptionBudget, a HorizontalPodAutoscaler, a
// NetworkPolicy and a CronJob.
const manifests = `apiVersion: v1
kind: Namespace
metadata: {name: shop}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: carts.shop.example.com}
spec:
  group: shop.example.com
  scope: Namespaced
  names: {plural: carts, singular: cart, kind: Cart}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              items: {type: integer}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - {name: web, image: nginx:1.27, resources: {requests: {cpu: 100m}}}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec:
  selector: {app: web}
  ports: [{port: 80}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: web, namespace: shop}
spec:
  rules:
  - host: shop.example.com
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web, namespace: shop}
spec:
  minAvailable: 1
  selector: {matchLabels: {app: web}}
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: web, namespace: shop}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 2
  maxReplicas: 5
  metrics:
  - type: Resource
    resource: {name: cpu, target: {type: Utilization, averageUtilization: 80}}
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: web, namespace: shop}
spec:
  podSelector: {matchLabels: {app: web}}
  ingress: [{from: [{podSelector: {}}]}]
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: report, namespace: shop}
spec:
  schedule: "* * * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: Never
          containers: [{name: report, image: busybox:1.36}]
`

const cart = `apiVersion: shop.example.com/v1
kind: Cart
metadata: {name: alice, namespace: shop}
spec: {items: 3}
`

func TestApplyOfAnApplicationCreatesEveryObject(t *testing.T) {
	k := newKubectl(t, kubectlDispatcher, KubeconfigAdminContext)
	out := k.run(manifests, "apply", "-f", "-")
	for _, want := range []string{
		"namespace/shop created",
		"customresourcedefinition.apiextensions.k8s.io/carts.shop.example.com created",
		"deployment.apps/web created",
		"service/web created",
		"ingress.networking.k8s.io/web created",
		"poddisruptionbudget.policy/web created",
		"horizontalpodautoscaler.autoscaling/web created",
		"networkpolicy.networking.k8s.io/web created",
		"cronjob.batch/report created",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("kubectl apply: no %q in\n%s", want, out)
		}
	}
	// The CRD is served once it is Established.
	k.run("", "wait", "--for=condition=Established", "--timeout=60s", "crd/carts.shop.example.com")
	if out := k.run(cart, "apply", "-f", "-"); !strings.Contains(out, "cart.shop.example.com/alice created") {
		t.Errorf("apply of the custom resource: %q", out)
	}

	t.Run("the custom resource is JSON under its group", func(t *testing.T) {
		resp, err := etcdClient(t).Get(context.Background(), "/registry/shop.example.com/carts/shop/alice")
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Kvs) != 1 {
			t.Fatalf("no key /registry/shop.example.com/carts/shop/alice")
		}
		var obj struct {
			Kind string
			Spec struct{ Items int }
		}
		if err := json.Unmarshal(resp.Kvs[0].Value, &obj); err != nil || obj.Kind != "Cart" || obj.Spec.Items != 3 {
			t.Errorf("stored value %q: %+v, %v", resp.Kvs[0].Value, obj, err)
		}
	})
	t.Run("the controllers act on the objects", func(t *testing.T) {
		eventually(t, time.Minute, "the Deployment's ReplicaSet creates its Pods", func() error {
			out, _, err := k.try("", "get", "pods", "-n", "shop", "-l", "app=web", "-o", "name")
			if n := strings.Count(out, "pod/web-"); err != nil || n != 2 {
				return fmt.Errorf("%d pods: %q %v", n, out, err)
			}
			return nil
		})
		eventually(t, 2*time.Minute, "the CronJob spawns a Job", func() error {
			out, _, err := k.try("", "get", "jobs", "-n", "shop", "-o", "name")
			if err != nil || !strings.Contains(out, "job.batch/report-") {
				return fmt.Errorf("jobs: %q %v", out, err)
			}
			return nil
		})
	})
}

func TestAPIResourcesAreTheDefaultServersOnes(t *testing.T) {
	k := newKubectl(t, kubectlDispatcher, KubeconfigAdminContext)
	out := k.run("", "api-resources", "-o", "name")
	names := map[string]bool{}
	for _, l := range strings.Fields(out) {
		names[l] = true
	}
	// A resource of each group a default kube-apiserver 1.37 serves.
	for _, want := range []string{
		"pods", "deployments.apps", "jobs.batch", "cronjobs.batch", "ingresses.networking.k8s.io",
		"networkpolicies.networking.k8s.io", "poddisruptionbudgets.policy",
		"horizontalpodautoscalers.autoscaling", "customresourcedefinitions.apiextensions.k8s.io",
		"apiservices.apiregistration.k8s.io", "selfsubjectaccessreviews.authorization.k8s.io",
		"tokenreviews.authentication.k8s.io", "clusterroles.rbac.authorization.k8s.io",
		"mutatingwebhookconfigurations.admissionregistration.k8s.io",
		"validatingadmissionpolicies.admissionregistration.k8s.io",
		"flowschemas.flowcontrol.apiserver.k8s.io", "certificatesigningrequests.certificates.k8s.io",
		"leases.coordination.k8s.io", "endpointslices.discovery.k8s.io", "events.events.k8s.io",
		"storageclasses.storage.k8s.io", "csidrivers.storage.k8s.io", "priorityclasses.scheduling.k8s.io",
		"runtimeclasses.node.k8s.io", "resourceclaims.resource.k8s.io", "deviceclasses.resource.k8s.io",
	} {
		if !names[want] {
			t.Errorf("kubectl api-resources does not list %s", want)
		}
	}
	var version struct{ ServerVersion struct{ GitVersion string } }
	if err := json.Unmarshal([]byte(k.run("", "version", "-o", "json")), &version); err != nil {
		t.Fatal(err)
	}
	if got := version.ServerVersion.GitVersion; got != decode.KubernetesVersion {
		t.Errorf("server version %q, want %s", got, decode.KubernetesVersion)
	}
	if len(names) < 60 {
		t.Errorf("kubectl api-resources lists %d resources, want the default server's 60 and more:\n%s", len(names), out)
	}
}

func TestAuthorizationIsRBAC(t *testing.T) {
	admin := newKubectl(t, kubectlDispatcher, KubeconfigAdminContext)
	viewer := newKubectl(t, kubectlDispatcher, KubeconfigViewerContext)
	if out := strings.TrimSpace(admin.run("", "auth", "can-i", "create", "pods")); out != "yes" {
		t.Errorf("admin can-i create pods: %q", out)
	}
	if out := strings.TrimSpace(viewer.run("", "auth", "can-i", "list", "secrets", "--all-namespaces")); out != "yes" {
		t.Errorf("viewer can-i list secrets: %q", out)
	}
	out, _, err := viewer.try("", "auth", "can-i", "create", "pods")
	if err == nil || strings.TrimSpace(out) != "no" {
		t.Errorf("viewer can-i create pods: %q, %v; want no", out, err)
	}
	_, errOut, err := viewer.try("", "create", "configmap", "refused", "--from-literal=a=b")
	want := `configmaps is forbidden: User "etcdscope-viewer" cannot create resource "configmaps" in API group "" in the namespace "default"`
	if err == nil || !strings.Contains(errOut, want) {
		t.Errorf("viewer's create: %v, %q; want %q", err, errOut, want)
	}
}

func TestDeletionsAreCollected(t *testing.T) {
	k := newKubectl(t, kubectlDispatcher, KubeconfigAdminContext)
	k.run("", "create", "namespace", "gc")
	k.run("", "create", "deployment", "shortlived", "-n", "gc", "--image=nginx:1.27", "--replicas=2")
	eventually(t, time.Minute, "the Deployment's Pods exist", func() error {
		out, _, err := k.try("", "get", "pods", "-n", "gc", "-o", "name")
		if n := strings.Count(out, "pod/shortlived-"); err != nil || n != 2 {
			return fmt.Errorf("%d pods: %q %v", n, out, err)
		}
		return nil
	})
	k.run("", "delete", "deployment", "shortlived", "-n", "gc", "--wait=false")
	eventually(t, time.Minute, "the garbage collector deletes its ReplicaSet and Pods", func() error {
		out, _, err := k.try("", "get", "replicasets,pods", "-n", "gc", "-o", "name")
		if err != nil || strings.TrimSpace(out) != "" {
			return fmt.Errorf("left: %q %v", out, err)
		}
		return nil
	})
	k.run("", "delete", "namespace", "gc", "--wait=false")
	eventually(t, time.Minute, "the namespace is finalized", func() error {
		_, errOut, err := k.try("", "get", "namespace", "gc")
		if err == nil || !strings.Contains(errOut, "NotFound") {
			return fmt.Errorf("still there: %v %q", err, errOut)
		}
		return nil
	})
}

// TestWritersAreNamedAsInARealCluster reads the managedFields of objects the
// components wrote, as kubectl shows them: the controllers' writes are
// kube-controller-manager's and the bootstrap's kube-apiserver's, as in a
// cluster where each runs as its own binary, not the process they share.
func TestWritersAreNamedAsInARealCluster(t *testing.T) {
	k := newKubectl(t, kubectlDispatcher, KubeconfigAdminContext)
	k.run("", "create", "deployment", "managed", "--image=nginx:1.27")
	managers := func(args ...string) []string {
		out, _, err := k.try("", append([]string{"get", "-o", "jsonpath={.items[*].metadata.managedFields[*].manager}{.metadata.managedFields[*].manager}", "--show-managed-fields"}, args...)...)
		if err != nil {
			return nil
		}
		return strings.Fields(out)
	}
	eventually(t, time.Minute, "the deployment controller writes a ReplicaSet", func() error {
		if got := managers("replicasets", "-l", "app=managed"); !slices.Contains(got, "kube-controller-manager") {
			return fmt.Errorf("managers %q, want kube-controller-manager", got)
		}
		return nil
	})
	if got := managers("namespace", "default"); !slices.Contains(got, "kube-apiserver") {
		t.Errorf("the default namespace's managers %q, want kube-apiserver", got)
	}
}

func TestTheCompactorRemovesOldHistory(t *testing.T) {
	k := newKubectl(t, kubectlDispatcher, KubeconfigAdminContext)
	k.run("", "create", "configmap", "compacted", "--from-literal=v=1")
	cli := etcdClient(t)
	ctx := context.Background()
	key := "/registry/configmaps/default/compacted"
	first, err := cli.Get(ctx, key)
	if err != nil || len(first.Kvs) != 1 {
		t.Fatalf("get %s: %v", key, err)
	}
	old := first.Kvs[0].ModRevision
	k.run("", "patch", "configmap", "compacted", "-p", `{"data":{"v":"2"}}`)
	// kube-apiserver compacts, at each interval, to the revision it saw at
	// the interval before: the first value goes within two intervals.
	eventually(t, 4*testCompaction+30*time.Second, "the first value is compacted away", func() error {
		_, err := cli.Get(ctx, key, clientv3.WithRev(old))
		if !errors.Is(err, rpctypes.ErrCompacted) {
			return fmt.Errorf("get at %d: %v", old, err)
		}
		return nil
	})
}

// The oldest and the newest kubectl here, run directly rather than
// through the dispatcher, discover the server and write through it.
func TestOldestAndNewestKubectl(t *testing.T) {
	for _, v := range []string{"1.27", "1.33"} {
		t.Run(v, func(t *testing.T) {
			k := newKubectl(t, "/usr/lib/google-cloud-sdk/bin/kubectl."+v, KubeconfigAdminContext)
			name := "kubectl-" + strings.ReplaceAll(v, ".", "-")
			k.run("", "create", "configmap", name, "--from-literal=by="+v)
			if out := k.run("", "get", "configmap", name, "-o", "jsonpath={.data.by}"); out != v {
				t.Errorf("kubectl %s get: %q", v, out)
			}
			if out := k.run("", "api-resources", "--api-group=apiextensions.k8s.io", "-o", "name"); !strings.Contains(out, "customresourcedefinitions.apiextensions.k8s.io") {
				t.Errorf("kubectl %s api-resources: %q", v, out)
			}
		})
	}
}

// TestEveryStoredValueIsTheStorageCodecs walks every key kube-apiserver has
// written by now (its bootstrap, the controllers', the tests before this
// one): each protobuf value is exactly what k8s.io/apiserver's storage
// codec makes of the object it holds, Secrets encrypted at rest as the
// encryption config says, and etcdscope decodes every value, protobuf or
// JSON, encrypted or not, without a problem.
func TestEveryStoredValueIsTheStorageCodecs(t *testing.T) {
	newKubectl(t, kubectlDispatcher, KubeconfigAdminContext).run("", "create", "secret", "generic", "stored-encrypted", "--from-literal=password=hunter2")
	resp, err := etcdClient(t).Get(context.Background(), "/registry/", clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	dec, unwrap := testDecoder(t), serverTransformers(t)
	resources := map[string]bool{}
	for _, kv := range resp.Kvs {
		key := string(kv.Key)
		obj := dec.Decode(key, kv.Value)
		if obj.Problem != "" {
			t.Errorf("%s (%s): %s", key, obj.Format, obj.Problem)
			continue
		}
		resources[obj.Key.Resource] = true
		plain := kv.Value
		if obj.Key.Resource == "secrets" {
			if !bytes.HasPrefix(plain, []byte("k8s:enc:aescbc:v1:"+testEncryptionKey+":")) {
				t.Errorf("%s is not encrypted at rest with aescbc key %s: %.20q", key, testEncryptionKey, plain)
				continue
			}
			if plain, err = unwrap(key, plain); err != nil {
				t.Errorf("%s: %v", key, err)
				continue
			}
		}
		if obj.Format != decode.FormatProtobuf {
			continue
		}
		stored, _, err := scheme.Codecs.UniversalDeserializer().Decode(plain, nil, nil)
		if err != nil {
			t.Errorf("%s: %v", key, err)
			continue
		}
		if !bytes.Equal(plain, storageEncode(t, stored)) {
			t.Errorf("%s: the stored value is not the storage codec's encoding of what it holds", key)
		}
	}
	if !resources["secrets"] {
		t.Error("no Secret stored: the encryption at rest was not seen")
	}
	if len(resources) < 30 {
		t.Errorf("only %d resources stored: %v", len(resources), resources)
	}
	t.Logf("%d values of %d resources", len(resp.Kvs), len(resources))
}

// serverTransformers decrypts a Secret's value with the transformers
// kube-apiserver builds from the same encryption config.
func serverTransformers(t *testing.T) func(key string, value []byte) ([]byte, error) {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	cfg, err := encryptionconfig.LoadEncryptionConfig(ctx, testOptions.EncryptionConfig, false, "test")
	if err != nil {
		t.Fatal(err)
	}
	secrets := cfg.Transformers[schema.GroupResource{Resource: "secrets"}]
	return func(key string, value []byte) ([]byte, error) {
		plain, _, err := secrets.TransformFromStorage(ctx, value, storagevalue.DefaultContext(key))
		return plain, err
	}
}

// storageEncode encodes obj as k8s.io/apiserver's storage codec does for a
// resource stored at obj's own version: protobuf, resourceVersion cleared.
func storageEncode(t *testing.T, obj runtime.Object) []byte {
	t.Helper()
	gv := obj.GetObjectKind().GroupVersionKind().GroupVersion()
	codec, _, err := serverstorage.NewStorageCodec(serverstorage.StorageCodecConfig{
		StorageMediaType:  "application/vnd.kubernetes.protobuf",
		StorageSerializer: scheme.Codecs,
		StorageVersion:    gv,
		MemoryVersion:     gv,
	})
	if err != nil {
		t.Fatal(err)
	}
	b, err := runtime.Encode(codec, obj)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
