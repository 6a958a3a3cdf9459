package cli

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/etcdscope/etcdscope/embedded/etcdtest"
	"github.com/etcdscope/etcdscope/etcdview/etcdviewtest"
)

// TestStatusOnKineSaysKineAndWhatItEmulates reads kine where k3s serves it,
// on a unix socket: status says it is kine and which etcd it emulates, the
// store's revision and the size kine reports, and neither that no member
// answered nor Raft figures kine does not have.
func TestStatusOnKineSaysKineAndWhatItEmulates(t *testing.T) {
	k := etcdtest.StartKine(t, etcdtest.KineOptions{Socket: true})
	cli := k.Client(t)
	rev := etcdviewtest.Put(t, cli, etcdviewtest.ConfigMap("status"))
	st, err := cli.Status(t.Context(), k.Endpoint)
	if err != nil {
		t.Fatal(err)
	}

	table := strings.Split(run(t, "--endpoints", k.Endpoint, "status"), "\n")
	if want := fmt.Sprintf("kine (emulating etcd %s) at %s, revision %d", st.Version, k.Endpoint, rev); table[0] != want {
		t.Errorf("status begins %q, want %q", table[0], want)
	}
	if len(table) < 3 || strings.Join(strings.Fields(table[1]), " ") != "NAME ENDPOINT EMULATES DB SIZE REVISION" {
		t.Fatalf("status printed\n%s\nwant kine's own columns", strings.Join(table, "\n"))
	}
	if row := strings.Fields(table[2]); len(row) != 7 || row[0] != "kine" || row[1] != k.Endpoint || row[3] != st.Version || row[6] != fmt.Sprint(rev) {
		t.Errorf("kine's row is %q, want its endpoint, etcd %s and revision %d", table[2], st.Version, rev)
	}

	var doc struct {
		Server          string `json:"server"`
		EmulatedVersion string `json:"emulatedVersion"`
		Revision        int64  `json:"revision"`
		Members         []struct {
			Name     string `json:"name"`
			DBSize   int64  `json:"dbSize"`
			Revision int64  `json:"revision"`
		} `json:"members"`
	}
	if err := json.Unmarshal([]byte(run(t, "--endpoints", k.Endpoint, "status", "-o", "json")), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Server != "kine (emulating etcd "+st.Version+")" || doc.EmulatedVersion != st.Version || doc.Revision != rev ||
		len(doc.Members) != 1 || doc.Members[0].DBSize <= 0 || doc.Members[0].Revision != rev {
		t.Errorf("status -o json: %+v, want kine emulating %s at revision %d, with its DB size", doc, st.Version, rev)
	}
}
