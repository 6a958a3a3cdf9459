package cluster

import (
	"context"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/etcdscope/etcdscope/etcdview"
	"github.com/etcdscope/etcdscope/etcdview/check"
	"github.com/etcdscope/etcdscope/ui/common"
	"github.com/etcdscope/etcdscope/ui/uitest"
)

func TestCheckOnOneStoreSaysThereIsOne(t *testing.T) {
	m := New(uitest.Common(uitest.Fixture()), 0, nil)
	m.SetSize(140, 12)
	m.Focus(true)
	uitest.Drive(t, m.Update, m.refresh)
	uitest.Press(t, m.Update, "c")
	view := strings.Split(m.View(), "\n")
	if !strings.Contains(view[1], "is one store: there are no members to compare") {
		t.Errorf("c on a single store:\n%s", strings.Join(view, "\n"))
	}
	if strings.Contains(m.View(), "> ") {
		t.Errorf("a cursor over nothing to open:\n%s", m.View())
	}
	uitest.Press(t, m.Update, "esc")
	if !strings.Contains(m.View(), "ENDPOINT") {
		t.Errorf("esc did not go back to the members:\n%s", m.View())
	}
}

// stuckSource answers Status only when its context ends, as a member that
// hangs does.
type stuckSource struct {
	*uitest.Source
	asked chan struct{}
}

func (s stuckSource) Status(ctx context.Context) (etcdview.Cluster, error) {
	s.asked <- struct{}{}
	<-ctx.Done()
	return etcdview.Cluster{}, ctx.Err()
}

func TestEscAndLeavingStopTheCheck(t *testing.T) {
	for _, stop := range []struct {
		name string
		do   func(m *Model)
	}{
		{"esc", func(m *Model) { m.Update(uitest.Key("esc")) }},
		{"leaving the screen", func(m *Model) { m.Focus(false) }},
	} {
		t.Run(stop.name, func(t *testing.T) {
			c := uitest.Common(uitest.Fixture())
			src := stuckSource{Source: uitest.Fixture(), asked: make(chan struct{}, 1)}
			c.Src = src
			m := New(c, 0, nil)
			m.SetSize(140, 12)
			m.Focus(true)
			m.Update(StatusMsg{Cluster: etcdview.Cluster{Description: "stuck"}})
			cmd := m.Update(uitest.Key("c"))
			if !strings.Contains(m.View(), "check members: pinning a revision… (esc stops)") {
				t.Errorf("a check that runs:\n%s", m.View())
			}
			// The check and the reader of its progress, as bubbletea runs them.
			batch, ok := cmd().(tea.BatchMsg)
			if !ok || len(batch) != 2 {
				t.Fatalf("c made %T, want the check and its progress reader", batch)
			}
			done := make(chan tea.Msg, 1)
			go func() { done <- batch[0]() }()
			select {
			case <-src.asked:
			case <-time.After(uitest.Deadline):
				t.Fatal("the check did not ask for the status")
			}
			stop.do(m)
			// The check's command ends with its context; what it says is
			// dropped, and its progress reader ends with it.
			uitest.Drive(t, m.Update, tea.Batch(func() tea.Msg { return <-done }, batch[1]))
			m.Focus(true)
			if view := m.View(); !strings.Contains(view, "check members stopped: c runs it again") {
				t.Errorf("after %s:\n%s", stop.name, view)
			}
		})
	}
}

// TestReportShowsEachMemberAndTheDifferingKeys lays out what Members
// reports of a member whose file was altered: a row per member, one per
// key with each member's version of it, and enter opens the key's values.
func TestReportShowsEachMemberAndTheDifferingKeys(t *testing.T) {
	m := New(uitest.Common(uitest.Fixture()), 0, nil)
	m.SetSize(140, 14)
	m.Focus(true)
	uitest.Drive(t, m.Update, m.refresh)
	key := "/registry/configmaps/default/motd"
	state := func(member, hash string) check.KeyState {
		return check.KeyState{Member: member, Present: true, ModRevision: 40, Version: 2, ValueHash: hash}
	}
	rep := &check.Report{Rev: 42, Method: check.MethodRange, Compared: 1200, DifferencesTotal: 1,
		Members: []check.Member{
			{Name: "etcd-0", State: "hash 1a2b3c4d at revision 42"},
			{Name: "etcd-1", State: "hash 99999999 at revision 42"},
			{Name: "etcd-2", State: "down: connection refused", Problem: true},
		},
		Differences: []check.Difference{{Key: key, Members: []check.KeyState{state("etcd-0", "0123456789abcdef"), state("etcd-1", "fedcba9876543210")}}}}
	m.check.shown = true
	m.Update(CheckedMsg{gen: m.check.gen, report: rep})
	view := m.View()
	for _, want := range []string{
		"the members differ at revision 42: 1 key (range reads, 1200 keys compared",
		"etcd-2       voter    down: connection refused",
		"> " + key, "mod 40 ver 2 01234567", "mod 40 ver 2 fedcba98",
	} {
		if !strings.Contains(view, want) {
			t.Errorf("the report does not show %q:\n%s", want, view)
		}
	}
	cmd := m.Update(uitest.Key("enter"))
	if cmd == nil {
		t.Fatalf("enter on %s did nothing", key)
	}
	if got := cmd(); got != (common.OpenMemberValuesMsg{Key: key, Rev: 42}) {
		t.Errorf("enter sent %v, want the values of %s at 42", got, key)
	}
}
