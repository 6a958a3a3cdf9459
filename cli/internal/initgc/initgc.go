// Package initgc keeps the garbage collector off while the process's
// packages initialize, until package cli's init gives the setting back.
//
// The binary links Kubernetes' control plane (the bundled cluster), whose
// packages register their types, flags and metrics at init: about 12 MB of
// allocations, all of it live, across which the collector would run three
// cycles for nothing it can free, a fifth of a light command's start (ls,
// get, du on a file). Its only import is runtime/debug, so that it runs
// among the first inits: Go initializes, in the order of their import
// paths, the first package whose imports are done.
package initgc

import "runtime/debug"

// percent is GOGC as the process was started with it (100 unless set).
var percent = debug.SetGCPercent(-1)

// Restore gives the collector back its setting, once the packages it
// was off for are initialized.
func Restore() { debug.SetGCPercent(percent) }
