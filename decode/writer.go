package decode

import (
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// LastWriter names the manager that last wrote the object value holds, as
// "manager (Operation)": its managedFields entry with the latest time. An
// entry without a time is older than any with one (kube-apiserver sets the
// time on every entry it writes since server-side apply; older entries may
// lack it).
func LastWriter(key string, value []byte) (string, error) {
	o := Decode(key, value)
	if o.Object == nil {
		return "", errors.New("the value does not decode to an object: " + o.Problem)
	}
	var name string
	var at time.Time
	for _, e := range o.ManagedFields() {
		if t := e.Time; name == "" || t != nil && t.After(at) {
			name = fmt.Sprintf("%s (%s)", e.Manager, e.Operation)
			if t != nil {
				at = t.Time
			}
		}
	}
	if name == "" {
		return "", errors.New("the object has no managedFields")
	}
	return name, nil
}

// ManagedFields is the object's managedFields entries; none when the value
// held no object, or one without ObjectMeta.
func (o Object) ManagedFields() []metav1.ManagedFieldsEntry {
	if o.Object == nil {
		return nil
	}
	m, err := meta.Accessor(o.Object)
	if err != nil {
		return nil
	}
	return m.GetManagedFields()
}
