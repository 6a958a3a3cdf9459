package restore

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// applyRank is the order kubectl applies kinds in: what others refer to
// before them (a Namespace, then the identities and permissions pods run
// as, the data they mount, the claims, the Services they are reached by),
// then the workloads, then the rest of the built-in kinds, and custom
// resources last, after their CRDs.
var applyRank = map[string]int{
	"Namespace": 0,
	"CustomResourceDefinition.apiextensions.k8s.io": 1,
	"ResourceQuota":                         2,
	"LimitRange":                            2,
	"ServiceAccount":                        3,
	"Role.rbac.authorization.k8s.io":        4,
	"RoleBinding.rbac.authorization.k8s.io": 5,
	"ConfigMap":                             6,
	"Secret":                                6,
	"PersistentVolumeClaim":                 7,
	"Service":                               8,
	"Deployment.apps":                       9,
	"StatefulSet.apps":                      9,
	"DaemonSet.apps":                        9,
	"ReplicaSet.apps":                       9,
	"ReplicationController":                 9,
	"Job.batch":                             9,
	"CronJob.batch":                         9,
	"Pod":                                   9,
}

const (
	builtinRank = 10 // a built-in kind not in applyRank
	customRank  = 11 // a custom resource
)

// entry is one object of the manifest being made.
type entry struct {
	Restored
	u      *unstructured.Unstructured
	custom bool
}

func rankOf(e entry) int {
	if r, ok := applyRank[e.u.GroupVersionKind().GroupKind().String()]; ok {
		return r
	}
	if e.custom {
		return customRank
	}
	return builtinRank
}

// sortForApply orders entries by applyRank, then by kind and name: a
// manifest that reads the same for the same store.
func sortForApply(entries []entry) {
	slices.SortStableFunc(entries, func(a, b entry) int {
		if d := rankOf(a) - rankOf(b); d != 0 {
			return d
		}
		if a.Kind != b.Kind {
			return strings.Compare(a.Kind, b.Kind)
		}
		return strings.Compare(a.Name, b.Name)
	})
}

// fill sets m's YAML, JSON and Objects from entries: one object alone
// when list is false, else a v1 List, which kubectl apply takes as the
// objects it holds, in order.
func (m *Manifest) fill(entries []entry, list bool) error {
	for _, e := range entries {
		m.Objects = append(m.Objects, e.Restored)
	}
	if len(entries) == 0 {
		return nil
	}
	var doc any = entries[0].u.Object
	if list {
		items := make([]any, len(entries))
		for i, e := range entries {
			items[i] = e.u.Object
		}
		doc = map[string]any{"apiVersion": "v1", "kind": "List", "items": items}
	}
	js, err := json.MarshalIndent(doc, "", "    ")
	if err != nil {
		return fmt.Errorf("write the manifest: %w", err)
	}
	y, err := yaml.JSONToYAML(js)
	if err != nil {
		return fmt.Errorf("write the manifest: %w", err)
	}
	m.JSON, m.YAML = append(js, '\n'), y
	return nil
}
