package demo

import (
	"context"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"
)

// TestAComponentThatFailsIsReported starts a second demo whose components,
// all but the script's admin, get a configuration no client can be made
// from: each stops at once with an error, which OnError hears as it
// happens and Err keeps.
func TestAComponentThatFailsIsReported(t *testing.T) {
	heard := make(chan error, 64) // more than the components: OnError never waits
	broken := func(user string) *rest.Config {
		if user == ScriptUser {
			return configFor(user)
		}
		return &rest.Config{Host: "http://[::1"} // not a URL
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	d, err := Start(ctx, Options{Config: broken, Nodes: 1, Profile: Off, OnError: func(err error) { heard <- err }})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	select {
	case err := <-heard:
		if err == nil || !strings.Contains(err.Error(), "[::1") {
			t.Errorf("OnError heard %v, want the broken configuration's error", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no failure reached OnError within 30s")
	}
	if d.Err() == nil {
		t.Error("Err is nil after a component failed")
	}
}
