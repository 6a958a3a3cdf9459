package initheap

import (
	"bytes"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"unsafe"
)

// heapAhead is the heap the huge-page advice covers beyond what the inits
// before this one filled: the rest of the inits (10 MB) and a light
// command's work (du on a file of 100k objects allocates 10 MB).
const heapAhead = 24 << 20

// chunk is the Go runtime's palloc chunk (pallocChunkBytes): the heap
// starts at a chunk's first byte and grows a chunk or more at a time.
const chunk = 4 << 20

// arena is the Go runtime's heap arena on 64-bit Linux (heapArenaBytes):
// the heap's first chunk and what follows it are in one unless the heap
// had to go on elsewhere.
const arena = 64 << 20

// thpDir is where Linux says how transparent huge pages are given.
const thpDir = "/sys/kernel/mm/transparent_hugepage/"

// advised is the range of the heap the advice was given for, zero when
// it was not given.
var advised struct{ lo, hi uintptr }

// anchor is a small object of the heap's first chunk, the one the inits
// so far filled.
var anchor *[16]byte

// adviseHugePages gives the heap's first chunk and the next heapAhead
// bytes MADV_HUGEPAGE, where the kernel gives huge pages only to memory so
// advised: the fault of a fresh 2 MiB page then stands for 512 of 4 KiB.
// The Go runtime gives no such advice since Go 1.21.1, for long-running
// programs whose heap shrinks and grows; this is only the heap that the
// inits and a light command fill once. Side by side on a kine file of
// 100k objects, `du --db` took 149 ms against 180 without the advice, and
// --version 103 against 133 (hyperfine, 30 runs each); --version's page
// faults went from 4,700 to 2,500, its peak RSS up 3 MB. GODEBUG=
// disablethp=1, the runtime's setting that keeps huge pages off the heap,
// turns it off, which is how to measure without it.
//
// Advice holds for a mapping as it is: the runtime maps each step of the
// heap's growth anew, so the advised bytes are mapped first, by an
// allocation of heapAhead, which a collection then frees for the inits
// to fill (5 ms of the 30 saved: the heap is small at this point).
func adviseHugePages() {
	huge := hugePageSize()
	if huge == 0 || thpDisabled(syscall.Getenv) {
		return
	}
	anchor = new([16]byte)
	lo := uintptr(unsafe.Pointer(anchor)) &^ (chunk - 1)
	ahead := make([]byte, heapAhead)
	start := uintptr(unsafe.Pointer(unsafe.SliceData(ahead)))
	hi := (start + heapAhead + huge - 1) &^ (huge - 1)
	if start-lo > arena {
		// The heap went on in another arena, not next to its first
		// chunk: the range between may hold other mappings.
		lo = start &^ (huge - 1)
	}
	if _, _, errno := syscall.Syscall(syscall.SYS_MADVISE, lo, hi-lo, syscall.MADV_HUGEPAGE); errno != 0 {
		return
	}
	advised.lo, advised.hi = lo, hi
	runtime.KeepAlive(ahead)
	runtime.GC()
}

// hugePageSize is the size of a transparent huge page when the kernel
// gives them to advised memory only (its mode "madvise"), and 0 when the
// advice would change nothing: huge pages never given or always given, or
// larger than a chunk (arm64 with 64 KiB pages has 512 MiB ones).
func hugePageSize() uintptr {
	enabled := readSmall(thpDir + "enabled")
	if !bytes.Contains(enabled, []byte("[madvise]")) {
		return 0
	}
	size, err := strconv.ParseUint(string(bytes.TrimSpace(readSmall(thpDir+"hpage_pmd_size"))), 10, 64)
	if err != nil || size == 0 || size > chunk || size&(size-1) != 0 {
		return 0
	}
	return uintptr(size)
}

// thpDisabled says GODEBUG holds disablethp=1, its last setting.
func thpDisabled(getenv func(string) (string, bool)) bool {
	godebug, _ := getenv("GODEBUG")
	disabled := false
	for setting := range strings.SplitSeq(godebug, ",") {
		if name, value, ok := strings.Cut(strings.TrimSpace(setting), "="); ok && name == "disablethp" {
			disabled = value == "1"
		}
	}
	return disabled
}

// readSmall reads up to 64 bytes of a file with the system calls alone:
// os is not needed this early.
func readSmall(path string) []byte {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	defer syscall.Close(fd)
	buf := make([]byte, 64)
	n, err := syscall.Read(fd, buf)
	if err != nil {
		return nil
	}
	return buf[:n]
}

// withdrawHugePages takes the advice back once the inits are done. The
// huge pages they filled stay, but Linux's khugepaged no longer collapses
// the range's small pages into huge ones: in a process that runs for
// hours it would hold a whole 2 MiB page for each 4 KiB the heap uses of
// it after the scavenger gave the rest back. With the advice kept, the
// bundled cluster's serve held 20 MB more RSS through a 10-minute calm
// soak (bench/soak: 434 MB against 413 at minute 10).
func withdrawHugePages() {
	if advised.lo == 0 {
		return
	}
	syscall.Syscall(syscall.SYS_MADVISE, advised.lo, advised.hi-advised.lo, syscall.MADV_NOHUGEPAGE)
}
