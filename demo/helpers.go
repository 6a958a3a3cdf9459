package demo

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
)

var labelsEverything = labels.Everything()

// setCondition replaces the condition of c's type, keeping its transition
// time when the status did not change, as the kubelet's status manager does.
func setCondition(st *corev1.PodStatus, c corev1.PodCondition) {
	for i, old := range st.Conditions {
		if old.Type == c.Type {
			if old.Status == c.Status {
				c.LastTransitionTime = old.LastTransitionTime
			}
			st.Conditions[i] = c
			return
		}
	}
	st.Conditions = append(st.Conditions, c)
}

func nodeName(i int) string { return fmt.Sprintf("node-%d", i+1) }
