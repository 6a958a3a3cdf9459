package etcdtest

import (
	"context"
	"path/filepath"
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

func TestEachVersionServesItsReleaseAndKeepsItsDataAcrossARestart(t *testing.T) {
	for _, v := range Versions {
		t.Run("etcd_"+v, func(t *testing.T) {
			e := StartVersion(t, v, Options{})
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cli := e.Client(t)
			put, err := cli.Put(ctx, "/registry/x", "y")
			if err != nil {
				t.Fatal(err)
			}
			endpoint := e.Endpoint
			if err := e.Restart(); err != nil {
				t.Fatal(err)
			}
			if e.Endpoint != endpoint {
				t.Errorf("endpoint %s after the restart, was %s", e.Endpoint, endpoint)
			}
			// The client written before the restart reads through it.
			got, err := cli.Get(ctx, "/registry/x")
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Kvs) != 1 || got.Kvs[0].ModRevision != put.Header.Revision {
				t.Errorf("after the restart /registry/x reads %v, want the put at revision %d", got.Kvs, put.Header.Revision)
			}
			st, err := cli.Status(ctx, e.Endpoint)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(st.Version, v+".") || st.Version != e.Version {
				t.Errorf("etcd %s reports server version %q, and --version %q", v, st.Version, e.Version)
			}
			t.Logf("etcd %s at %s", st.Version, e.Endpoint)
		})
	}
}

func TestBuildNamesTheBinaryForItsVersionAndReusesIt(t *testing.T) {
	repo, err := RepoRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	bin := VersionBinary(t, "3.5")
	again, err := Build(repo, "3.5")
	if err != nil || again != bin {
		t.Fatalf("second Build: %s, %v; want the cached %s", again, err, bin)
	}
	if !strings.HasPrefix(filepath.Base(bin), "etcd-3.5.") || filepath.Dir(bin) != CacheDir() {
		t.Errorf("binary %s is not named for its version in %s", bin, CacheDir())
	}
	if _, err := Build(repo, "3.3"); err == nil {
		t.Error("Build of a release line with no module succeeded")
	}
}
