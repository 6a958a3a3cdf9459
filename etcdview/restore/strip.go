package restore

import (
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// serverSet are the metadata fields the API server sets on every object:
// a create that carries resourceVersion fails, and the rest are ignored
// or refused.
var serverSet = []string{
	"resourceVersion", "uid", "creationTimestamp", "generation", "managedFields",
	"deletionTimestamp", "deletionGracePeriodSeconds", "selfLink",
}

// strip removes from u, an object as the API server serves it, what the
// server and its controllers set, so that `kubectl apply` creates it again
// as the user wrote it; it returns a phrase for each removal beyond the
// fields every object loses (serverSet, status). ownerReferences are
// judged apart (see pruneOwners).
func strip(u *unstructured.Unstructured) (dropped []string) {
	for _, f := range serverSet {
		unstructured.RemoveNestedField(u.Object, "metadata", f)
	}
	// The status is the controllers' report; a create ignores it where
	// the resource has a status subresource, and it would be stale.
	unstructured.RemoveNestedField(u.Object, "status")
	if fin := userFinalizers(u.GetFinalizers()); len(fin) != len(u.GetFinalizers()) {
		if len(fin) == 0 {
			unstructured.RemoveNestedField(u.Object, "metadata", "finalizers")
		} else {
			u.SetFinalizers(fin)
		}
	}
	gvk := u.GroupVersionKind()
	switch {
	case gvk.Group == "" && gvk.Kind == "Service":
		dropped = stripService(u)
	case gvk.Group == "batch" && gvk.Kind == "Job":
		dropped = stripJob(u)
	case gvk.Group == "" && gvk.Kind == "PersistentVolumeClaim":
		dropped = stripClaim(u)
	}
	return dropped
}

// userFinalizers are fin without those Kubernetes' own controllers and
// admission add (pvc-protection, job tracking, a cascading deletion's):
// they add them again, and a deletion's make no sense on a new object.
func userFinalizers(fin []string) []string {
	var out []string
	for _, f := range fin {
		switch {
		case f == "orphan", f == "foregroundDeletion",
			strings.HasPrefix(f, "kubernetes.io/"), strings.HasPrefix(f, "batch.kubernetes.io/"):
		default:
			out = append(out, f)
		}
	}
	return out
}

// stripService drops the cluster IPs the allocator gave the Service: the
// IP may be given to another Service by the time the manifest is applied,
// and a create that asks for an allocated one fails ("provided IP is
// already allocated"). A headless Service keeps its "None".
func stripService(u *unstructured.Unstructured) []string {
	ip, _, _ := unstructured.NestedString(u.Object, "spec", "clusterIP")
	if ip == "" || ip == "None" {
		return nil
	}
	unstructured.RemoveNestedField(u.Object, "spec", "clusterIP")
	unstructured.RemoveNestedField(u.Object, "spec", "clusterIPs")
	return []string{"spec.clusterIP " + ip + " (the allocator gives a new one)"}
}

// jobLabels are the labels the Job controller's defaulting puts on a Job's
// selector and its pod template, holding the Job's uid
// (batch validation: generateSelector): a create that carries them, or a
// selector, without spec.manualSelector, is refused.
var jobLabels = []string{
	"controller-uid", "batch.kubernetes.io/controller-uid", "job-name", "batch.kubernetes.io/job-name",
}

func stripJob(u *unstructured.Unstructured) []string {
	if manual, _, _ := unstructured.NestedBool(u.Object, "spec", "manualSelector"); manual {
		return nil
	}
	unstructured.RemoveNestedField(u.Object, "spec", "selector")
	for _, path := range [][]string{{"metadata", "labels"}, {"spec", "template", "metadata", "labels"}} {
		labels, ok, _ := unstructured.NestedStringMap(u.Object, path...)
		if !ok {
			continue
		}
		for _, l := range jobLabels {
			delete(labels, l)
		}
		if len(labels) == 0 {
			unstructured.RemoveNestedField(u.Object, path...)
		} else {
			_ = unstructured.SetNestedStringMap(u.Object, labels, path...)
		}
	}
	return []string{"spec.selector and the controller-uid labels (the Job's new uid is put there)"}
}

// claimAnnotations are the annotations the PV controller and the
// scheduler set on a claim as it binds.
var claimAnnotations = []string{
	"pv.kubernetes.io/bind-completed", "pv.kubernetes.io/bound-by-controller",
	"volume.beta.kubernetes.io/storage-provisioner", "volume.kubernetes.io/storage-provisioner",
	"volume.kubernetes.io/selected-node",
}

// stripClaim drops the binding state of a claim: the claim binds again,
// to a new volume, or to the one spec.volumeName names when the user
// named it (kept, unless pruneVolume finds it gone).
func stripClaim(u *unstructured.Unstructured) []string {
	ann := u.GetAnnotations()
	if len(ann) == 0 {
		return nil
	}
	for _, a := range claimAnnotations {
		delete(ann, a)
	}
	if len(ann) == 0 {
		unstructured.RemoveNestedField(u.Object, "metadata", "annotations")
	} else {
		u.SetAnnotations(ann)
	}
	return nil
}
