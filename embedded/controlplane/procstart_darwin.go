package controlplane

import "golang.org/x/sys/unix"

// processStart is the start time of process pid in microseconds after the
// epoch, as the kern.proc.pid sysctl gives it: macOS has no /proc.
func processStart(pid int) (uint64, error) {
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil {
		return 0, err
	}
	t := kp.Proc.P_starttime
	return uint64(t.Sec)*1_000_000 + uint64(t.Usec), nil
}
