package apiserver

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestReadTokenFileInKubeAPIServersFormat(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokens.csv")
	check(t, os.WriteFile(path, []byte("t1,alice,1,\"etcdscope:viewers,team\"\nt2,bob,2\n"), 0o600))
	got, err := readTokenFile(path)
	check(t, err)
	want := []Token{
		{Token: "t1", User: "alice", UID: "1", Groups: []string{ViewerGroup, "team"}},
		{Token: "t2", User: "bob", UID: "2"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
	check(t, os.WriteFile(path, []byte("just-a-token\n"), 0o600))
	if _, err := readTokenFile(path); err == nil {
		t.Error("a line without user and uid was accepted")
	}
}
