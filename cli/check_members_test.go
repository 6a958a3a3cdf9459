package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/etcdscope/etcdscope/embedded/etcdtest"
)

// membersJSON is the part of check -o json the tests read.
type membersJSON struct {
	Members struct {
		Revision   int64  `json:"revision"`
		Consistent bool   `json:"consistent"`
		Failed     bool   `json:"failed"`
		Method     string `json:"method"`
		Members    []struct {
			Name  string `json:"name"`
			Hash  *int64 `json:"hash"`
			State string `json:"state"`
		} `json:"members"`
		Differences []struct {
			Key     string `json:"key"`
			Members []struct {
				Member      string `json:"member"`
				Present     bool   `json:"present"`
				ModRevision int64  `json:"modRevision"`
				ValueSHA256 string `json:"valueSha256"`
			} `json:"members"`
		} `json:"differences"`
	} `json:"members"`
}

func TestCheckMembersFindsAnAlteredHostileKeyAndPrintsItInert(t *testing.T) {
	t.Parallel()
	c := etcdtest.StartCluster(t, 3, etcdtest.ClusterOptions{})
	cli := c.Client(t)
	const hostile = "/registry/configmaps/default/\x1b[2J\x1b]0;owned\x07evil"
	for _, k := range []string{"/registry/configmaps/default/a", hostile, "/registry/configmaps/default/z"} {
		if _, err := cli.Put(context.Background(), k, "v"); err != nil {
			t.Fatal(err)
		}
	}
	endpoints := "--endpoints=" + strings.Join(c.Endpoints(), ",")

	var healthy membersJSON
	if err := json.Unmarshal([]byte(run(t, "check", "members", endpoints, "-o", "json")), &healthy); err != nil {
		t.Fatal(err)
	}
	h := healthy.Members
	if !h.Consistent || h.Failed || h.Method != "hashkv" || len(h.Members) != 3 || len(h.Differences) != 0 {
		t.Fatalf("healthy cluster in -o json: %+v", h)
	}
	for _, m := range h.Members {
		if m.Hash == nil || *m.Hash != *h.Members[0].Hash {
			t.Errorf("member %s: hash %v", m.Name, m.Hash)
		}
	}

	bad := c.Members[2]
	bad.Stop()
	if err := bad.AlterValue(hostile, []byte("w")); err != nil {
		t.Fatal(err)
	}
	if err := bad.Start(); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCommand(t, "check", "members", endpoints, "--prefix", "/registry/")
	t.Logf("check members with member-2's value of a hostile key altered: exit %d\n%s%s", code, out, errOut)
	if code != 1 || strings.ContainsAny(out+errOut, "\x1b\x07") {
		t.Fatalf("check members on an altered member: exit %d, want 1 and nothing that a terminal runs:\n%q\n%q", code, out, errOut)
	}
	if !strings.Contains(out, `"/registry/configmaps/default/\x1b[2J\x1b]0;owned\aevil"`) || !strings.Contains(errOut, "disagree") {
		t.Errorf("text report does not name the key escaped, or stderr the failure:\n%s\n%s", out, errOut)
	}
	if strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
		t.Errorf("stderr is not one line:\n%s", errOut)
	}

	code, out, _ = runCommand(t, "check", endpoints, "-o", "json")
	var altered membersJSON
	if err := json.Unmarshal([]byte(out), &altered); err != nil || code != 1 {
		t.Fatalf("check -o json: exit %d, %v\n%s", code, err, out)
	}
	a := altered.Members
	if a.Consistent || !a.Failed || len(a.Differences) != 1 || a.Differences[0].Key != hostile {
		t.Fatalf("altered member in -o json: %+v", a)
	}
	d := a.Differences[0].Members
	if len(d) != 3 || d[0].ValueSHA256 != d[1].ValueSHA256 || d[2].ValueSHA256 == d[0].ValueSHA256 || d[2].ModRevision != d[0].ModRevision {
		t.Errorf("the members' states of the key: %+v", d)
	}
}
