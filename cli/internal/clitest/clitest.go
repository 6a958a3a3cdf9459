// Package clitest holds the fixtures that the tests of cli and of its
// command packages (cli/get) share.
package clitest

import (
	"net"
	"testing"

	"github.com/etcdscope/etcdscope/etcdview/etcdviewtest"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TerminalAttackValue is a ConfigMap as stored, whose data and annotations
// hold what a terminal obeys: OSC, CSI, BEL, C1 CSI and a bidi override.
func TerminalAttackValue(t *testing.T) []byte {
	t.Helper()
	cm, err := etcdviewtest.Encode(&corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: "motd", Namespace: "default", Annotations: map[string]string{"a": "\u009b31m\u202e"}},
		Data:       map[string]string{"motd": "\x1b]0;owned\x07\x1b[2J"},
	})
	if err != nil {
		t.Fatal(err)
	}
	return cm
}

// ClosedPort is a loopback port nothing listens on.
func ClosedPort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	return port
}
