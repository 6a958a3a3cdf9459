package controlplane

import (
	"os"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/etcdscope/etcdscope/demo"
)

// DefaultMemoryLimit is the Go runtime's soft memory limit
// (debug.SetMemoryLimit) for a process that runs the bundled control plane
// with the demo's profile: the goal of issue 27 for that load, less the
// resident pages the limit does not count (the binary's, about 100 MB, and
// the members' bbolt files, mapped), and never more than a quarter of the
// machine's memory (or of the cgroup's limit), so that a small machine
// collects sooner. 0 when the machine's size is unknown: GOGC alone, as Go
// does without a limit.
func DefaultMemoryLimit(p demo.Profile) int64 {
	goal := int64(calmLimit)
	if p == demo.Busy {
		goal = busyLimit
	}
	total := machineMemory()
	if limit, ok := cgroupLimit(); ok && (total == 0 || limit < total) {
		total = limit
	}
	if total == 0 {
		return 0
	}
	return min(goal, total/4)
}

// The limits of DefaultMemoryLimit, measured with bench/soak (see
// docs/benchmarks.md).
const (
	calmLimit = 256 << 20
	busyLimit = 640 << 20
)

// cgroupLimit is cgroup v2's memory.max for this process, where a
// container's limit is: the machine's memory is not what it may use.
func cgroupLimit() (int64, bool) {
	b, err := os.ReadFile("/sys/fs/cgroup/memory.max")
	if err != nil {
		return 0, false
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64) // "max": no limit
	return n, err == nil && n > 0
}

// setMemoryLimit sets the Go runtime's soft limit to limit bytes when it
// is positive, and returns what undoes it.
func setMemoryLimit(limit int64) (restore func()) {
	if limit <= 0 {
		return func() {}
	}
	old := debug.SetMemoryLimit(limit)
	return func() { debug.SetMemoryLimit(old) }
}
