package decode

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestLastWriterNamesTheNewestManagedFieldsEntry(t *testing.T) {
	now := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	hourAgo := metav1.NewTime(now.Add(-time.Hour))
	cm := func(entries ...metav1.ManagedFieldsEntry) []byte {
		return stored(t, &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "default", ManagedFields: entries}})
	}
	tests := []struct {
		name, want, wantErr string
		value               []byte
	}{
		{"the latest time wins", "kubelet (Update)", "", cm(
			metav1.ManagedFieldsEntry{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply, Time: &hourAgo},
			metav1.ManagedFieldsEntry{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate, Time: &now},
			metav1.ManagedFieldsEntry{Manager: "helm", Operation: metav1.ManagedFieldsOperationUpdate})},
		{"an entry without a time is older", "kubectl (Apply)", "", cm(
			metav1.ManagedFieldsEntry{Manager: "helm", Operation: metav1.ManagedFieldsOperationUpdate},
			metav1.ManagedFieldsEntry{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply, Time: &hourAgo})},
		{"only entries without a time: the first", "helm (Update)", "", cm(
			metav1.ManagedFieldsEntry{Manager: "helm", Operation: metav1.ManagedFieldsOperationUpdate})},
		{"no managedFields", "", "no managedFields", cm()},
		{"not an object", "", "does not decode to an object", []byte("\x00\x01binary")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := LastWriter("/registry/configmaps/default/c", tc.value)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("LastWriter = %q, %v; want an error saying %q", got, err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("LastWriter = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}
