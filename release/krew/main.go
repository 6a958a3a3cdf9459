// Command krew checks the krew plugin manifest that release/build writes,
// beside krew's own checks (release/krew/check runs them): krew reads a
// manifest leniently, so that an older krew reads a newer index, and a
// misspelt optional field would pass it unseen. This decodes the manifest
// into krew's own types with unknown fields refused.
package main

import (
	"fmt"
	"os"

	"sigs.k8s.io/krew/pkg/index"
	"sigs.k8s.io/yaml"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: krew MANIFEST")
		os.Exit(1)
	}
	if err := decodeStrict(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "krew:", err)
		os.Exit(1)
	}
}

// decodeStrict decodes the manifest at path into krew's Plugin type,
// refusing a field the type does not have.
func decodeStrict(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var p index.Plugin
	if err := yaml.UnmarshalStrict(b, &p); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}
