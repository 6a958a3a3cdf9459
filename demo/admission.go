package demo

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/utils/ptr"
)

// The demo's admission control, as a cluster's platform team would add it:
// a webhook server in this process, whose mutating half labels every Pod
// and whose validating half refuses one image, registered through real
// MutatingWebhookConfiguration and ValidatingWebhookConfiguration objects,
// and a ValidatingAdmissionPolicy (CEL, in kube-apiserver) that caps a
// Deployment's replicas. kube-system is left alone by all three.
const (
	// WebhookLabel is the label the mutating webhook puts on each Pod.
	WebhookLabel      = "demo.etcdscope.io/admitted-by"
	webhookLabelValue = "demo-webhook"
	// ForbiddenImage is the image the validating webhook refuses.
	ForbiddenImage = "registry.example.com/cryptominer:latest"
	// MaxReplicas is what the ValidatingAdmissionPolicy allows a
	// Deployment.
	MaxReplicas = 20

	webhookName = "demo.etcdscope.io"
	policyName  = "demo-replica-limit"
)

// addon is who writes the admission objects: not kubeadm, the cluster's
// platform team.
var addon = metav1.CreateOptions{FieldManager: "platform-team"}

// maxReview bounds an AdmissionReview read: it carries at most one object
// and its old version, each under kube-apiserver's 3 MiB request limit.
const maxReview = 8 << 20

// webhook is the admission webhook server, on a loopback port.
type webhook struct {
	server *http.Server
	url    string
	caPEM  []byte
}

func startWebhook() (*webhook, error) {
	certPEM, keyPEM, err := certutil.GenerateSelfSignedCertKey("127.0.0.1", []net.IP{net.IPv4(127, 0, 0, 1)}, nil)
	if err != nil {
		return nil, err
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("the admission webhook's port: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /mutate", review(labelPod))
	mux.HandleFunc("POST /validate", review(refuseForbiddenImage))
	w := &webhook{url: "https://" + l.Addr().String(), caPEM: certPEM}
	w.server = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second,
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}}
	go w.server.ServeTLS(l, "", "")
	return w, nil
}

func (w *webhook) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = w.server.Shutdown(ctx)
}

// review answers an AdmissionReview with what decide makes of its Pod.
func review(decide func(*corev1.Pod) *admissionv1.AdmissionResponse) http.HandlerFunc {
	return func(rw http.ResponseWriter, req *http.Request) {
		var ar admissionv1.AdmissionReview
		if err := json.NewDecoder(io.LimitReader(req.Body, maxReview)).Decode(&ar); err != nil || ar.Request == nil {
			http.Error(rw, "not an admission.k8s.io/v1 AdmissionReview", http.StatusBadRequest)
			return
		}
		resp := &admissionv1.AdmissionResponse{Allowed: true}
		var pod corev1.Pod
		if err := json.Unmarshal(ar.Request.Object.Raw, &pod); err == nil {
			resp = decide(&pod)
		}
		resp.UID = ar.Request.UID
		ar.Response, ar.Request = resp, nil
		rw.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(rw).Encode(&ar)
	}
}

// labelPod adds WebhookLabel with a JSON patch.
func labelPod(pod *corev1.Pod) *admissionv1.AdmissionResponse {
	path := "/metadata/labels/" + strings.ReplaceAll(strings.ReplaceAll(WebhookLabel, "~", "~0"), "/", "~1")
	var patch []map[string]any
	if pod.Labels == nil {
		patch = append(patch, map[string]any{"op": "add", "path": "/metadata/labels", "value": map[string]string{}})
	}
	patch = append(patch, map[string]any{"op": "add", "path": path, "value": webhookLabelValue})
	b, _ := json.Marshal(patch)
	return &admissionv1.AdmissionResponse{Allowed: true, Patch: b, PatchType: ptr.To(admissionv1.PatchTypeJSONPatch)}
}

// refuseForbiddenImage refuses a Pod that runs ForbiddenImage.
func refuseForbiddenImage(pod *corev1.Pod) *admissionv1.AdmissionResponse {
	for _, c := range append(pod.Spec.InitContainers, pod.Spec.Containers...) {
		if c.Image == ForbiddenImage {
			return &admissionv1.AdmissionResponse{Allowed: false, Result: &metav1.Status{
				Code: http.StatusForbidden, Reason: metav1.StatusReasonForbidden,
				Message: fmt.Sprintf("container %q: image %s is not allowed in this cluster", c.Name, ForbiddenImage),
			}}
		}
	}
	return &admissionv1.AdmissionResponse{Allowed: true}
}

// admissionObjects register the webhook and the policy; the webhook's
// address and CA are this run's, so existing configurations are updated.
func (w *webhook) admissionObjects() []createStep {
	notSystem := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
		{Key: corev1.LabelMetadataName, Operator: metav1.LabelSelectorOpNotIn, Values: []string{"kube-system"}}}}
	hook := func(path string, ops ...admissionregistrationv1.OperationType) (admissionregistrationv1.WebhookClientConfig, []admissionregistrationv1.RuleWithOperations) {
		return admissionregistrationv1.WebhookClientConfig{URL: ptr.To(w.url + path), CABundle: w.caPEM},
			[]admissionregistrationv1.RuleWithOperations{{Operations: ops, Rule: admissionregistrationv1.Rule{
				APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}, Scope: ptr.To(admissionregistrationv1.NamespacedScope)}}}
	}
	// Ignore: a Pod is not held up while the demo, and its server, are down.
	ignore, none := ptr.To(admissionregistrationv1.Ignore), ptr.To(admissionregistrationv1.SideEffectClassNone)
	mcc, mrules := hook("/mutate", admissionregistrationv1.Create)
	vcc, vrules := hook("/validate", admissionregistrationv1.Create, admissionregistrationv1.Update)
	return []createStep{
		upsert("mutatingwebhookconfiguration "+webhookName, func(ctx context.Context, c kubernetes.Interface) error {
			cfg := &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: webhookName},
				Webhooks: []admissionregistrationv1.MutatingWebhook{{Name: "label." + webhookName, ClientConfig: mcc, Rules: mrules,
					FailurePolicy: ignore, SideEffects: none, NamespaceSelector: notSystem, TimeoutSeconds: ptr.To[int32](2),
					AdmissionReviewVersions: []string{"v1"}}}}
			return createOrReplace(ctx, c.AdmissionregistrationV1().MutatingWebhookConfigurations(), cfg)
		}),
		upsert("validatingwebhookconfiguration "+webhookName, func(ctx context.Context, c kubernetes.Interface) error {
			cfg := &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: webhookName},
				Webhooks: []admissionregistrationv1.ValidatingWebhook{{Name: "images." + webhookName, ClientConfig: vcc, Rules: vrules,
					FailurePolicy: ignore, SideEffects: none, NamespaceSelector: notSystem, TimeoutSeconds: ptr.To[int32](2),
					AdmissionReviewVersions: []string{"v1"}}}}
			return createOrReplace(ctx, c.AdmissionregistrationV1().ValidatingWebhookConfigurations(), cfg)
		}),
		create("validatingadmissionpolicy "+policyName, func(ctx context.Context, c kubernetes.Interface) (*admissionregistrationv1.ValidatingAdmissionPolicy, error) {
			return c.AdmissionregistrationV1().ValidatingAdmissionPolicies().Create(ctx, &admissionregistrationv1.ValidatingAdmissionPolicy{
				ObjectMeta: metav1.ObjectMeta{Name: policyName},
				Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
					FailurePolicy: ptr.To(admissionregistrationv1.Fail),
					MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
						RuleWithOperations: admissionregistrationv1.RuleWithOperations{
							Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
							Rule:       admissionregistrationv1.Rule{APIGroups: []string{"apps"}, APIVersions: []string{"v1"}, Resources: []string{"deployments"}}}}}},
					Validations: []admissionregistrationv1.Validation{{
						Expression: fmt.Sprintf("object.spec.replicas <= %d", MaxReplicas),
						Message:    fmt.Sprintf("a Deployment runs at most %d replicas here", MaxReplicas)}},
				},
			}, addon)
		}),
		create("validatingadmissionpolicybinding "+policyName, func(ctx context.Context, c kubernetes.Interface) (*admissionregistrationv1.ValidatingAdmissionPolicyBinding, error) {
			return c.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Create(ctx, &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
				ObjectMeta: metav1.ObjectMeta{Name: policyName},
				Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: policyName,
					ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
					MatchResources:    &admissionregistrationv1.MatchResources{NamespaceSelector: notSystem}},
			}, addon)
		}),
	}
}

// replacer is a typed client of a cluster-scoped kind.
type replacer[T any] interface {
	Create(context.Context, T, metav1.CreateOptions) (T, error)
	Get(context.Context, string, metav1.GetOptions) (T, error)
	Update(context.Context, T, metav1.UpdateOptions) (T, error)
}

// createOrReplace creates obj, or replaces what is there under its name.
func createOrReplace[T interface {
	metav1.Object
	comparable
}](ctx context.Context, c replacer[T], obj T) error {
	_, err := c.Create(ctx, obj, addon)
	if !apierrors.IsAlreadyExists(err) {
		return err
	}
	cur, err := c.Get(ctx, obj.GetName(), metav1.GetOptions{})
	if err != nil {
		return err
	}
	obj.SetResourceVersion(cur.GetResourceVersion())
	_, err = c.Update(ctx, obj, metav1.UpdateOptions{FieldManager: addon.FieldManager})
	return err
}

func upsert(what string, fn func(context.Context, kubernetes.Interface) error) createStep {
	return createStep{what, fn}
}
