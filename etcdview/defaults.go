package etcdview

import (
	"fmt"
	"time"
)

// etcdctl's defaults for --dial-timeout and --command-timeout: the CLI's
// flags, a Config that leaves them zero, and the UI's reads share them.
const (
	DefaultDialTimeout    = 2 * time.Second
	DefaultCommandTimeout = 5 * time.Second
)

// CheckTimeouts refuses a --dial-timeout or --command-timeout the user set
// to zero or less: a Config takes zero for the default, and the flags would
// silently become 2s and 5s, where etcdctl would fail every call.
func CheckTimeouts(dial, command time.Duration) error {
	for _, t := range []struct {
		flag   string
		d, def time.Duration
	}{{"--dial-timeout", dial, DefaultDialTimeout}, {"--command-timeout", command, DefaultCommandTimeout}} {
		if t.d <= 0 {
			return fmt.Errorf("%s %v: must be positive, such as %v", t.flag, t.d, t.def)
		}
	}
	return nil
}
