package controlplane

import (
	"context"
	"fmt"
)

// StopMember stops the etcd member the cluster pane names: the TUI's k.
func (cp *ControlPlane) StopMember(name string) error {
	i, err := cp.member(name)
	if err != nil {
		return err
	}
	return cp.cluster.StopMember(i)
}

// RestartMember starts a stopped member again, on its data and ports.
func (cp *ControlPlane) RestartMember(ctx context.Context, name string) error {
	i, err := cp.member(name)
	if err != nil {
		return err
	}
	return cp.cluster.RestartMember(ctx, i)
}

// member is the index of the member named name, as embedded.Cluster counts.
func (cp *ControlPlane) member(name string) (int, error) {
	for i, m := range cp.cluster.Members() {
		if m.Name == name {
			return i, nil
		}
	}
	return 0, fmt.Errorf("no member %q in the bundled cluster", name)
}
