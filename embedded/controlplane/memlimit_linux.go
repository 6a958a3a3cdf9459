package controlplane

import "golang.org/x/sys/unix"

// machineMemory is the machine's RAM in bytes, 0 when unknown.
func machineMemory() int64 {
	var info unix.Sysinfo_t
	if unix.Sysinfo(&info) != nil {
		return 0
	}
	return int64(info.Totalram) * int64(info.Unit)
}
