package changes

import (
	"bytes"
	"cmp"
	"slices"
	"time"

	"github.com/etcdscope/etcdscope/decode"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Writer is one entry of an object's metadata.managedFields, named as
// kubectl shows them (`kubectl get -o yaml --show-managed-fields`).
type Writer struct {
	// Manager is the field manager: kubectl's "kubectl-create",
	// "kubectl-client-side-apply", a --field-manager, a controller's
	// user agent.
	Manager     string
	Operation   string // "Apply" or "Update"
	Subresource string // "" for the object itself, "status", "scale", ...
	// Time is when the API server last recorded a change by this manager,
	// by its own clock, to the second; zero when the entry has none.
	Time time.Time
}

// String is "manager Operation[ subresource] time".
func (w Writer) String() string {
	s := w.Manager + " " + w.Operation
	if w.Subresource != "" {
		s += " " + w.Subresource
	}
	if !w.Time.IsZero() {
		s += " " + w.Time.UTC().Format(time.RFC3339)
	}
	return s
}

// writersOf is the managedFields entries of after that the writes between
// before and after added or renewed: the API server sets an entry's time,
// and merges its fields, whenever a write by that manager changes a field
// (managedFieldsUpdater.Update in k8s.io/apiserver's fieldmanager). before
// nil means the object did not exist before: every entry is a writer.
// Deletions are recorded nowhere in the object, so a deletion's author is
// not among them; and two writes by one manager in the same second with
// the same fields leave one trace.
func writersOf(before *decode.Object, after decode.Object) []Writer {
	var old []metav1.ManagedFieldsEntry
	if before != nil {
		old = before.ManagedFields()
	}
	var out []Writer
	for _, e := range after.ManagedFields() {
		if slices.ContainsFunc(old, func(o metav1.ManagedFieldsEntry) bool { return sameEntry(o, e) }) {
			continue
		}
		w := Writer{Manager: e.Manager, Operation: string(e.Operation), Subresource: e.Subresource}
		if e.Time != nil {
			w.Time = e.Time.Time
		}
		out = append(out, w)
	}
	slices.SortStableFunc(out, func(a, b Writer) int {
		return cmp.Or(a.Time.Compare(b.Time), cmp.Compare(a.Manager, b.Manager))
	})
	return out
}

// sameEntry says whether two entries are one manager's, unchanged.
func sameEntry(a, b metav1.ManagedFieldsEntry) bool {
	if a.Manager != b.Manager || a.Operation != b.Operation || a.Subresource != b.Subresource {
		return false
	}
	if (a.Time == nil) != (b.Time == nil) || a.Time != nil && !a.Time.Equal(b.Time) {
		return false
	}
	if (a.FieldsV1 == nil) != (b.FieldsV1 == nil) {
		return false
	}
	return a.FieldsV1 == nil || bytes.Equal(a.FieldsV1.Raw, b.FieldsV1.Raw)
}
