package kube

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	policy "k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/mutating"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/validating"
)

// admissionNotes turns the audit annotations that admission webhooks and
// policies leave on a request into one line each, in the order they ran.
// The values are JSON in the dispatchers' own types (mutating's
// MutationAuditAnnotation and PatchAuditAnnotation, the policy plugin's
// ValidationFailureValue); one this code does not know is kept as
// "key: value".
func admissionNotes(annotations map[string]string) []string {
	var keys []string
	for k := range annotations {
		if strings.Contains(k, "admission.k8s.io/") {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, byInvocation)
	var out []string
	for _, k := range keys {
		out = append(out, admissionNote(k, annotations[k]))
	}
	return out
}

func admissionNote(key, value string) string {
	round, _ := invocation(key)
	again := ""
	if round > 0 {
		again = fmt.Sprintf(", reinvoked (round %d)", round)
	}
	switch {
	case strings.HasPrefix(key, mutating.MutationAuditAnnotationPrefix):
		var m mutating.MutationAuditAnnotation
		if json.Unmarshal([]byte(value), &m) == nil {
			did := "changed nothing"
			if m.Mutated {
				did = "mutated the object"
			}
			return fmt.Sprintf("mutating webhook %s (%s): %s%s", m.Webhook, m.Configuration, did, again)
		}
	case strings.HasPrefix(key, mutating.PatchAuditAnnotationPrefix):
		var p mutating.PatchAuditAnnotation
		if json.Unmarshal([]byte(value), &p) == nil {
			return fmt.Sprintf("mutating webhook %s (%s) patched: %s%s", p.Webhook, p.Configuration, patchOps(p.Patch), again)
		}
	case strings.HasPrefix(key, mutating.MutationAuditAnnotationFailedOpenKeyPrefix),
		strings.HasPrefix(key, validating.ValidatingAuditAnnotationFailedOpenKeyPrefix):
		return "a webhook call failed and was ignored (failurePolicy: Ignore): " + value
	case key == "validation.policy.admission.k8s.io/validation_failure":
		var fs []policy.ValidationFailureValue
		if json.Unmarshal([]byte(value), &fs) == nil && len(fs) > 0 {
			var lines []string
			for _, f := range fs {
				lines = append(lines, fmt.Sprintf("policy %s (binding %s) failed, %v: %s", f.Policy, f.Binding, f.ValidationActions, f.Message))
			}
			return strings.Join(lines, "; ")
		}
	}
	return key + ": " + value
}

// patchOps names a JSON patch's operations and paths: "add /metadata/labels".
func patchOps(patch any) string {
	ops, ok := patch.([]any)
	if !ok {
		return "a patch"
	}
	var out []string
	for _, op := range ops {
		m, _ := op.(map[string]any)
		out = append(out, fmt.Sprintf("%v %v", m["op"], m["path"]))
	}
	return strings.Join(out, ", ")
}

// byInvocation orders annotation keys by the round and index the
// dispatchers put at their end ("…/round_1_index_10"), then by key.
func byInvocation(a, b string) int {
	ra, ia := invocation(a)
	rb, ib := invocation(b)
	if ra != rb {
		return ra - rb
	}
	if ia != ib {
		return ia - ib
	}
	return strings.Compare(a, b)
}

// invocation reads "round_R_index_I" at the end of key; -1s when absent.
func invocation(key string) (round, index int) {
	_, tail, ok := strings.Cut(key, "/round_")
	if !ok {
		return -1, -1
	}
	r, i, ok := strings.Cut(tail, "_index_")
	if !ok {
		return -1, -1
	}
	round, err1 := strconv.Atoi(r)
	index, err2 := strconv.Atoi(i)
	if err1 != nil || err2 != nil {
		return -1, -1
	}
	return round, index
}
