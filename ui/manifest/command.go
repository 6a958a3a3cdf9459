package manifest

import (
	"fmt"
	"strings"

	"github.com/etcdscope/etcdscope/decode"
)

// ApplyLine is the shell command that prints the manifest of the object at
// key as it was at rev and applies it: etcdscope restore, as kubectl names
// the object when the key is one under kube-apiserver's default prefix,
// else by its key, piped into kubectl apply. etcdscope writes nothing; the
// user runs it.
func ApplyLine(keys decode.KeyParser, key string, rev int64, showSecrets bool) string {
	args := []string{"etcdscope", "restore"}
	k := keys.Parse(key)
	switch {
	case k.IsObject && k.Prefix == decode.DefaultPrefix && k.Resource != "" && k.Name != "":
		res := k.Resource
		if k.Group != "" {
			res += "." + k.Group
		}
		args = append(args, shellWord(res+"/"+k.Name))
		if k.Namespace != "" {
			args = append(args, "-n", shellWord(k.Namespace))
		}
	default:
		args = append(args, shellWord(key))
	}
	args = append(args, "--rev", fmt.Sprint(rev))
	if showSecrets {
		args = append(args, "--show-secrets")
	}
	return strings.Join(args, " ") + " | kubectl apply -f -"
}

// shellWord is s as one word of a POSIX shell: bare when it holds only
// characters no shell gives a meaning to, else in single quotes.
func shellWord(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=@%+,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
