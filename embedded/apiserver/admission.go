package apiserver

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/plugin/namespace/lifecycle"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	api "k8s.io/kubernetes/pkg/apis/core"
	"k8s.io/kubernetes/plugin/pkg/admission/defaulttolerationseconds"
)

// systemNamespaces are the namespaces kube-apiserver creates at start and
// never lets go (NamespaceLifecycle's immortal namespaces and the system
// namespaces controller).
var systemNamespaces = []string{"default", "kube-system", "kube-public", "kube-node-lease"}

// newAdmission builds the admission chain. Schema defaults (restartPolicy,
// dnsPolicy, schedulerName, imagePullPolicy, ...) are applied while
// decoding, as in kube-apiserver; the chain adds what kube-apiserver's
// default plugins add:
//   - NamespaceLifecycle (k8s.io/apiserver): no objects in a namespace
//     that does not exist or is terminating;
//   - DefaultTolerationSeconds (k8s.io/kubernetes): the not-ready and
//     unreachable tolerations of 300s on every pod;
//   - the serviceAccountName default of the ServiceAccount plugin, without
//     its token volume (no token issuer runs here).
func newAdmission(client kubernetes.Interface, informers informers.SharedInformerFactory) (admission.Interface, error) {
	nsLifecycle, err := lifecycle.NewLifecycle(sets.New("default", "kube-system", "kube-public"))
	if err != nil {
		return nil, err
	}
	nsLifecycle.SetExternalKubeClientSet(client)
	nsLifecycle.SetExternalKubeInformerFactory(informers)
	if err := nsLifecycle.ValidateInitialization(); err != nil {
		return nil, fmt.Errorf("NamespaceLifecycle: %w", err)
	}
	tolerations := defaulttolerationseconds.NewDefaultTolerationSeconds()
	tolerations.InspectFeatureGates(utilfeature.DefaultFeatureGate)
	if err := tolerations.ValidateInitialization(); err != nil {
		return nil, err
	}
	chain := admission.NewChainHandler(nsLifecycle, serviceAccountDefault{admission.NewHandler(admission.Create)}, tolerations)
	return timedAdmission{chain}, nil
}

// serviceAccountDefault sets a pod's service account to "default" when it
// names none, as the ServiceAccount admission plugin does.
type serviceAccountDefault struct{ *admission.Handler }

func (serviceAccountDefault) Admit(_ context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	if a.GetResource().GroupResource() != api.Resource("pods") || a.GetSubresource() != "" {
		return nil
	}
	pod, ok := a.GetObject().(*api.Pod)
	if !ok {
		return nil
	}
	if pod.Spec.ServiceAccountName == "" {
		pod.Spec.ServiceAccountName = "default"
		pod.Spec.DeprecatedServiceAccount = "default" //nolint:staticcheck // kube's plugin sets the alias too
	}
	return nil
}

// timedAdmission times the mutating half of the chain for the write trace;
// the validating half is timed with strategy validation, between the end of
// mutation and the storage call.
type timedAdmission struct{ chain admission.Interface }

func (t timedAdmission) Handles(op admission.Operation) bool { return t.chain.Handles(op) }

func (t timedAdmission) Admit(ctx context.Context, a admission.Attributes, o admission.ObjectInterfaces) error {
	r := recorderFrom(ctx)
	defer func() {
		r.update(func(r *traceRecorder) { r.mutateEnd = time.Now() })
	}()
	defer r.stage(StageMutate, time.Now())
	return t.chain.(admission.MutationInterface).Admit(ctx, a, o)
}

func (t timedAdmission) Validate(ctx context.Context, a admission.Attributes, o admission.ObjectInterfaces) error {
	return t.chain.(admission.ValidationInterface).Validate(ctx, a, o)
}
