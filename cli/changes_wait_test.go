package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/etcdscope/etcdscope/embedded/etcdtest"
)

// runWithin runs etcdscope args in a process of its own and returns its
// exit status and streams, failing when it has not ended within d.
func runWithin(t *testing.T, d time.Duration, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := etcdscope(args)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	code = exitWithin(t, cmd, d)
	return code, out.String(), errOut.String()
}

// TestChangesAndWatchAnswerOnAFreshEtcdAndARefusal: on an etcd at revision
// 1, changes answers at once; as a user who may read /registry/ only,
// changes below it answers, and changes and watch of what the user may not
// read fail with etcd's refusal, exit status 1, instead of waiting forever.
func TestChangesAndWatchAnswerOnAFreshEtcdAndARefusal(t *testing.T) {
	t.Parallel()
	etcdtest.EachVersion(t, func(t *testing.T, e etcdtest.Etcd) {
		ep := []string{"--endpoints", strings.Join(e.Endpoints, ",")}
		if e.TLS != nil {
			ep = append(ep, tlsFlags(e.TLS)...)
		}
		for _, args := range [][]string{{"changes"}, {"changes", "--from-rev", "1"}, {"changes", "--since", "1m"}, {"changes", "-o", "json"}} {
			code, out, errOut := runWithin(t, 20*time.Second, append(ep, args...)...)
			if code != 0 || !strings.Contains(out, "No changes: etcd is at revision 1, nothing was ever written") {
				t.Errorf("%v on a fresh etcd: exit %d, stdout %q, stderr %q", args, code, out, errOut)
			}
		}
		e.Client.Put(t.Context(), "/registry/configmaps/default/a", "1")
		etcdtest.EnableReadOnlyUser(t, e.Client)
		viewer := append(ep, "--user", etcdtest.ReadOnlyUser+":"+etcdtest.ReadOnlyPassword)
		if code, out, errOut := runWithin(t, 20*time.Second, append(viewer, "changes", "/registry/configmaps/", "--from-rev", "1")...); code != 0 || !strings.Contains(out, "configmaps") {
			t.Errorf("changes below /registry/ as the read-only user: exit %d, stdout %q, stderr %q", code, out, errOut)
		}
		for _, args := range [][]string{{"changes", "--from-rev", "1"}, {"watch", "/other/"}} {
			code, _, errOut := runWithin(t, 20*time.Second, append(viewer, args...)...)
			if code != 1 || !strings.Contains(errOut, "etcdserver: permission denied") {
				t.Errorf("%v outside the read-only role: exit %d, stderr %q, want etcd's refusal", args, code, errOut)
			}
		}
	})
}
