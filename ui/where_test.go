package ui

import (
	"strings"
	"testing"

	"github.com/etcdscope/etcdscope/etcdview"
	"github.com/etcdscope/etcdscope/ui/tail"
	"github.com/etcdscope/etcdscope/ui/uitest"
)

func TestWhereFiltersTheTailAndABadOneKeepsIt(t *testing.T) {
	m := appOn(uitest.Fixture())
	update := updateOf(m)
	pod := func(name, phase string, rev int64) etcdview.Event {
		v := `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"` + name + `","namespace":"shop"},"status":{"phase":"` + phase + `"}}`
		return etcdview.Event{Type: etcdview.Added, KV: etcdview.KV{Key: "/registry/pods/shop/" + name, Value: []byte(v), ModRevision: rev}}
	}
	m.Update(tail.BatchesMsg{Batches: []etcdview.Batch{{Revision: 101, Events: []etcdview.Event{
		pod("web-0", "Running", 100), pod("web-1", "Pending", 101)}}}})
	uitest.Press(t, update, "2")
	command := func(line string) string {
		uitest.Press(t, update, ":")
		uitest.Type(t, update, line)
		uitest.Press(t, update, "enter")
		return m.View()
	}
	got := command(`where object.status.phase == "Running"`)
	if !strings.Contains(got, `where object.status.phase == "Running": 1 shown, 1 hidden`) || strings.Contains(got, "shop/web-1") || !strings.Contains(got, "shop/web-0") {
		t.Fatalf(":where in the tail:\n%s", got)
	}
	got = command(`where object.status.phase = "Pending"`)
	if !strings.Contains(got, ":where 1:21: Syntax error") || !strings.Contains(got, `where object.status.phase == "Running": 1 shown`) {
		t.Errorf("a bad :where does not say where, or dropped the filter:\n%s", got)
	}
	got = command("where")
	if strings.Contains(got, "where object") || !strings.Contains(got, "shop/web-1") {
		t.Errorf(":where alone did not clear the filter:\n%s", got)
	}
}
