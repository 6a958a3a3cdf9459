package controlplane

import "golang.org/x/sys/unix"

// machineMemory is the machine's RAM in bytes (sysctl hw.memsize), 0 when
// unknown.
func machineMemory() int64 {
	n, err := unix.SysctlUint64("hw.memsize")
	if err != nil {
		return 0
	}
	return int64(n)
}
