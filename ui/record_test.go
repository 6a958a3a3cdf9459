package ui

import (
	"errors"
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
