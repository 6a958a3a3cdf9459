package etcdview

import "time"

// etcdctl's defaults for --dial-timeout and --command-timeout: the CLI's
// flags, a Config that leaves them zero, and the UI's reads share them.
const (
	DefaultDialTimeout    = 2 * time.Second
	DefaultCommandTimeout = 5 * time.Second
)
