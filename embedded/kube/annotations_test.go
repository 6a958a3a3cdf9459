package kube

import (
	"encoding/json"
	"slices"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	policy "k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/mutating"
)

// TestAdmissionNotesReadTheDispatchersAnnotations feeds admissionNotes the
// annotations kube-apiserver's webhook and policy dispatchers write, each
// value marshalled from their own types: every one becomes a sentence, in
// the order the webhooks ran (index 10 after index 2), and one it does not
// know stays as it was.
func TestAdmissionNotesReadTheDispatchersAnnotations(t *testing.T) {
	js := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	got := admissionNotes(map[string]string{
		mutating.MutationAuditAnnotationPrefix + "round_0_index_10": js(mutating.MutationAuditAnnotation{Configuration: "c", Webhook: "late.example.com"}),
		mutating.MutationAuditAnnotationPrefix + "round_0_index_2":  js(mutating.MutationAuditAnnotation{Configuration: "c", Webhook: "labels.example.com", Mutated: true}),
		mutating.MutationAuditAnnotationPrefix + "round_1_index_2":  js(mutating.MutationAuditAnnotation{Configuration: "c", Webhook: "labels.example.com"}),
		mutating.PatchAuditAnnotationPrefix + "round_0_index_2": js(mutating.PatchAuditAnnotation{Configuration: "c", Webhook: "labels.example.com", PatchType: "JSONPatch",
			Patch: []any{map[string]any{"op": "add", "path": "/metadata/labels/team", "value": "a"}}}),
		"failed-open.validating.webhook.admission.k8s.io/round_0_index_0": "context deadline exceeded",
		"validation.policy.admission.k8s.io/validation_failure": js([]policy.ValidationFailureValue{{Message: "too many", Policy: "cap", Binding: "cap-all",
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Audit}}}),
		"example.admission.k8s.io/other":   "kept",
		"authorization.k8s.io/decision":    "allow",
		"pod-security.kubernetes.io/audit": "restricted",
	})
	want := []string{
		"a webhook call failed and was ignored (failurePolicy: Ignore): context deadline exceeded",
		"mutating webhook labels.example.com (c): mutated the object",
		"mutating webhook labels.example.com (c) patched: add /metadata/labels/team",
		"mutating webhook late.example.com (c): changed nothing",
		"mutating webhook labels.example.com (c): changed nothing, reinvoked (round 1)",
	}
	// The keys without a round sort first, by key.
	want = append([]string{
		"example.admission.k8s.io/other: kept",
		"policy cap (binding cap-all) failed, [Audit]: too many",
	}, want...)
	if !slices.Equal(got, want) {
		t.Errorf("admissionNotes:\n got %q\nwant %q", got, want)
	}
}
