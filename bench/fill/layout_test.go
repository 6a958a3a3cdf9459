package fill

import (
	"strings"
	"testing"
)

func TestEveryLayoutWritesItsKeysOnceBelowItsLevel(t *testing.T) {
	for _, l := range Layouts {
		t.Run(l.Name, func(t *testing.T) {
			p := l.Plan(20_000)
			seen := map[string]bool{}
			children := map[string]bool{}
			for k := range p.KeyNames() {
				if seen[k] {
					t.Fatalf("key %s written twice", k)
				}
				seen[k] = true
				rest, ok := strings.CutPrefix(k, l.Level+"/")
				if !ok {
					t.Fatalf("key %s outside the level %s", k, l.Level)
				}
				first, _, _ := strings.Cut(rest, "/")
				children[first] = true
			}
			if len(seen) != p.Keys {
				t.Errorf("%d keys written, want %d", len(seen), p.Keys)
			}
			if len(children) < 2 {
				t.Errorf("%d children below %s, want a level to list", len(children), l.Level)
			}
		})
	}
	if _, err := LayoutNamed("nope"); err == nil || !strings.Contains(err.Error(), "cluster") {
		t.Errorf("LayoutNamed(nope) = %v, want an error naming the layouts", err)
	}
}
