package etcdtest

import (
	"context"
	"strings"
	"testing"
	"time"
)

func TestExternalEtcdServesPlainAndTLS(t *testing.T) {
	for _, tls := range []bool{false, true} {
		e := Start(t, Options{TLS: tls})
		if !strings.HasPrefix(e.Endpoint, map[bool]string{false: "http://", true: "https://"}[tls]) {
			t.Errorf("endpoint %s with TLS=%v", e.Endpoint, tls)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		cli := e.Client(t)
		if _, err := cli.Put(ctx, "/registry/x", "y"); err != nil {
			t.Fatalf("put (TLS=%v): %v", tls, err)
		}
		st, err := cli.Status(ctx, e.Endpoint)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(st.Version, "3.") {
			t.Errorf("status version %q", st.Version)
		}
		t.Logf("%s at %s (TLS=%v): server version %s", e.Version, e.Endpoint, tls, st.Version)
	}
}
