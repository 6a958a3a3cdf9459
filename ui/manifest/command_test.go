package manifest

import (
	"testing"

	"github.com/etcdscope/etcdscope/decode"
)

func TestApplyLineNamesTheObjectAsKubectlDoes(t *testing.T) {
	for _, tc := range []struct {
		key         string
		rev         int64
		showSecrets bool
		want        string
	}{
		{"/registry/pods/shop/web-0", 1234, false, "etcdscope restore pods/web-0 -n shop --rev 1234 | kubectl apply -f -"},
		{"/registry/deployments/shop/web", 7, false, "etcdscope restore deployments.apps/web -n shop --rev 7 | kubectl apply -f -"},
		{"/registry/namespaces/shop", 7, false, "etcdscope restore namespaces/shop --rev 7 | kubectl apply -f -"},
		{"/registry/secrets/shop/db", 9, true, "etcdscope restore secrets/db -n shop --rev 9 --show-secrets | kubectl apply -f -"},
		// A key outside the prefix is given as it is; one a shell would
		// read as more than a word is quoted.
		{"/other/thing", 3, false, "etcdscope restore /other/thing --rev 3 | kubectl apply -f -"},
		{"/other/it's; rm -rf ~", 3, false, `etcdscope restore '/other/it'\''s; rm -rf ~' --rev 3 | kubectl apply -f -`},
	} {
		if got := ApplyLine(decode.KeyParser{}, tc.key, tc.rev, tc.showSecrets); got != tc.want {
			t.Errorf("%s at %d:\n got %s\nwant %s", tc.key, tc.rev, got, tc.want)
		}
	}
}
