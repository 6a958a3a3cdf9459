package cmdutil

import "fmt"

// CheckRev refuses a negative revision flag before anything is read: etcd
// takes a negative range revision for the newest, so `--rev -5` would read
// as if no revision were given.
func CheckRev(flag string, rev int64) error {
	if rev < 0 {
		return fmt.Errorf("--%s %d: want 0 (the newest) or more", flag, rev)
	}
	return nil
}
