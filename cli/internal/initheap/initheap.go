// Package initheap readies the heap for the process's package inits: the
// collector is off until package cli's init gives its setting back, and
// on Linux the memory the inits fill is on huge pages.
//
// The binary links Kubernetes' control plane (the bundled cluster), whose
// packages register their types, flags and metrics at init: about 12 MB of
// allocations, all of it live. The collector would run three cycles across
// them for nothing it can free, a fifth of a light command's start (ls,
// get, du on a file); and each fresh 4 KiB page of them costs a page fault,
// 11 µs on the VMs this is measured on, a third of the start (see
// hugepages_linux.go). Its only imports are low in the standard library, so
// that it runs among the first inits: Go initializes, in the order of their
// import paths, the first package whose imports are done.
package initheap

import "runtime/debug"

// percent is GOGC as the process was started with it (100 unless set).
var percent = start()

func start() int {
	p := debug.SetGCPercent(-1)
	adviseHugePages()
	return p
}

// Restore gives the collector back its setting, and takes back the
// huge-page advice, once the packages they were for are initialized.
func Restore() {
	debug.SetGCPercent(percent)
	withdrawHugePages()
}
