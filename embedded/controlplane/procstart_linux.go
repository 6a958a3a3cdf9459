package controlplane

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// processStart is the start time of process pid in clock ticks after boot,
// field 22 of /proc/PID/stat; the command name before it is in parentheses
// and may hold spaces, so the fields are counted after the last ')'.
func processStart(pid int) (uint64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	fields := strings.Fields(string(b[i+1:]))
	if len(fields) < 20 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(fields)+2)
	}
	return strconv.ParseUint(fields[19], 10, 64)
}
