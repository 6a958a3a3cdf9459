package ui

import (
	"errors"
	"strings"
	"testing"

	"github.com/etcdscope/etcdscope/ui/uitest"
)

// The header says record FILE while the explorer's recorder runs, and
// when it fails, says so in the header and the flash line.
func TestHeaderSaysWhatTheExplorerRecords(t *testing.T) {
	done := make(chan error, 1)
	tm := startOn(t, 160, 45, Options{Source: uitest.Fixture(), Description: "fixture store",
		Recording: &Recording{File: "/tmp/incident.db", Done: done}})
	waitScreen(t, tm, "pods/", "etcd-0 ★", "record /tmp/incident.db")
	done <- errors.New("record to /tmp/incident.db: disk I/O error")
	waitScreen(t, tm, "record /tmp/incident.db stopped", "✗ record /tmp/incident.db stopped: record to /tmp/incident.db: disk I/O error")
}

// The recorder keeps to the cluster it was started for: after :ctx beta
// the header says whose recording goes on, its end is still said there,
// and back on alpha the header is as before.
func TestTheRecorderKeepsToItsClusterAcrossASwitch(t *testing.T) {
	f, alpha := twoClusters()
	done := make(chan error, 1)
	tm := startOn(t, 160, 45, Options{Source: alpha, Description: "fixture store", Clusters: f,
		Recording: &Recording{File: "/tmp/incident.db", Cluster: "alpha", Done: done}})
	waitScreen(t, tm, "pods/", "record /tmp/incident.db")
	command(tm, "ctx beta")
	waitScreen(t, tm, "csinodes/", "record /tmp/incident.db of alpha", "switched to beta; record /tmp/incident.db goes on recording alpha")
	done <- errors.New("record to /tmp/incident.db: disk I/O error")
	waitScreen(t, tm, "record /tmp/incident.db of alpha stopped", "✗ record /tmp/incident.db stopped: record to /tmp/incident.db: disk I/O error")
	command(tm, "ctx alpha")
	waitScreen(t, tm, "switched to alpha", "pods/")
	m := finalModel(t, tm)
	if v := m.View(); !strings.Contains(v, "record /tmp/incident.db stopped") || strings.Contains(v, "of alpha") {
		t.Errorf("back on alpha, the header does not say record /tmp/incident.db stopped alone:\n%s", v)
	}
}
