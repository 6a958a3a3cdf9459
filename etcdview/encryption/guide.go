package encryption

import (
	"fmt"

	"github.com/dustin/go-humanize/english"
)

// A Finding is one way of storing that the write key does not cover, and
// what to do about it.
type Finding struct {
	Resource string // as kubectl names it
	Stored   Stored
	Text     string // one line of guidance
}

// Findings are the report's rows that are not under the write key, in the
// report's order, each with a line of guidance.
func (r *Report) Findings() []Finding {
	var out []Finding
	for _, res := range r.Resources {
		for _, s := range res.Stored {
			if s.Status != Older && s.Status != Unreadable {
				continue
			}
			out = append(out, Finding{Resource: res.Name(), Stored: s, Text: guidance(res, s)})
		}
	}
	return out
}

// rewrite is how a user has kube-apiserver write every object of a resource
// again, under its write key: kubectl replace of what kubectl get read (the
// Kubernetes docs' "Ensure all Secrets are encrypted"), or a
// StorageVersionMigration, which does the same from inside the cluster.
func rewrite(resource string) string {
	return fmt.Sprintf("kubectl get %s -A -o json | kubectl replace -f - (or a StorageVersionMigration of %[1]s)", resource)
}

func guidance(res Resource, s Stored) string {
	name, values := res.Name(), fmt.Sprintf("%d %s", s.Count, english.PluralWord(int(s.Count), "value", ""))
	plain := s.Provider == Identity
	switch {
	case s.Status == Older && plain:
		return fmt.Sprintf("%s stored plain, while the config writes %s with %s: rewrite them to encrypt them: %s",
			values, name, res.WritesWith, rewrite(name))
	case s.Status == Older && res.WritesWith == Identity:
		return fmt.Sprintf("%s still encrypted with %s, while the config writes %s plain: rewrite them before that key leaves the config: %s",
			values, s.Label, name, rewrite(name))
	case s.Status == Older:
		return fmt.Sprintf("%s under %s, an older key the config still reads; it writes with %s: rewrite them, then that key can leave the config: %s",
			values, s.Label, res.WritesWith, rewrite(name))
	case plain:
		return fmt.Sprintf("%s stored plain, and the config's providers for %s have no identity: kube-apiserver cannot read them; add `identity: {}` after the write key, restart it, then rewrite them: %s",
			values, name, rewrite(name))
	case s.Provider == "kms":
		return fmt.Sprintf("%s under %s, which the config no longer lists for %s: kube-apiserver cannot read them; put that provider back after the write key (the plugin must still have the key), restart it, then rewrite them: %s",
			values, s.Label, name, rewrite(name))
	}
	return fmt.Sprintf("%s under %s, which the config no longer has for %s: kube-apiserver cannot read them; put that key back after the write key, restart it, then rewrite them: %s; a key that is lost leaves only deleting them",
		values, s.Label, name, rewrite(name))
}
