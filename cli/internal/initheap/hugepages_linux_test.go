package initheap

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

// TestTheInitsHeapIsAdvisedHugePagesUntilRestore reads the kernel's view
// of this test process, whose inits ran the advice: every mapping of the
// advised range carries it (smaps' "hg" flag), and the range holds the
// heap's first chunk, which the inits before this package filled. Restore,
// at the end of the inits, takes it back ("nh").
func TestTheInitsHeapIsAdvisedHugePagesUntilRestore(t *testing.T) {
	if hugePageSize() == 0 {
		t.Skip("this kernel gives transparent huge pages always or never, not on advice")
	}
	if thpDisabled(os.LookupEnv) {
		t.Skip("GODEBUG=disablethp=1")
	}
	if advised.lo == 0 || advised.hi-advised.lo < heapAhead {
		t.Fatalf("advised %#x-%#x, want at least %d bytes", advised.lo, advised.hi, heapAhead)
	}
	if a := uintptr(unsafe.Pointer(anchor)); a < advised.lo || a >= advised.hi {
		t.Errorf("the heap's first chunk (%#x) is outside the advised range %#x-%#x", a, advised.lo, advised.hi)
	}
	maps := readSmaps(t)
	covered, huge := uintptr(0), 0
	for _, m := range maps {
		lo, hi := max(m.lo, advised.lo), min(m.hi, advised.hi)
		if lo >= hi {
			continue
		}
		if !m.flags["hg"] {
			t.Errorf("mapping %#x-%#x in the advised range has no huge-page advice (VmFlags %v)", m.lo, m.hi, m.flags)
		}
		covered += hi - lo
		huge += m.anonHugeKB
	}
	if covered == 0 {
		t.Fatalf("no mapping of this process is in the advised range %#x-%#x", advised.lo, advised.hi)
	}
	t.Logf("advised %d MiB, %d MiB of it mapped, %d KiB on huge pages", (advised.hi-advised.lo)>>20, covered>>20, huge)

	Restore()
	for _, m := range readSmaps(t) {
		if max(m.lo, advised.lo) < min(m.hi, advised.hi) && (m.flags["hg"] || !m.flags["nh"]) {
			t.Errorf("after Restore, mapping %#x-%#x in the advised range still has the advice (VmFlags %v)", m.lo, m.hi, m.flags)
		}
	}
}

// TestDisableTHPLeavesTheHeapAlone runs this test binary again with
// GODEBUG=disablethp=1: the advice is not given.
func TestDisableTHPLeavesTheHeapAlone(t *testing.T) {
	if os.Getenv("INITHEAP_PRINT_ADVISED") == "1" {
		fmt.Printf("advised %d %d\n", advised.lo, advised.hi)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^TestDisableTHPLeavesTheHeapAlone$")
	cmd.Env = append(os.Environ(), "INITHEAP_PRINT_ADVISED=1", "GODEBUG=disablethp=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if !strings.Contains(string(out), "advised 0 0\n") {
		t.Errorf("with GODEBUG=disablethp=1 the heap was advised: %s", out)
	}
}

func TestThpDisabledReadsGODEBUGsLastSetting(t *testing.T) {
	for _, tc := range []struct {
		godebug string
		want    bool
	}{
		{"", false},
		{"disablethp=1", true},
		{"madvdontneed=1, disablethp=1", true},
		{"disablethp=1,disablethp=0", false},
		{"disablethp=0", false},
		{"xdisablethp=1", false},
	} {
		getenv := func(string) (string, bool) { return tc.godebug, true }
		if got := thpDisabled(getenv); got != tc.want {
			t.Errorf("GODEBUG=%q: disabled %v, want %v", tc.godebug, got, tc.want)
		}
	}
}

type mapping struct {
	lo, hi     uintptr
	flags      map[string]bool
	anonHugeKB int
}

// readSmaps reads this process's mappings from /proc/self/smaps: each
// one's range, VmFlags and AnonHugePages.
func readSmaps(t *testing.T) []mapping {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skipf("no smaps: %v", err)
	}
	defer f.Close()
	var maps []mapping
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		fields := strings.Fields(line)
		switch {
		case len(fields) == 0:
		case strings.HasPrefix(line, "VmFlags:") && len(maps) > 0:
			for _, fl := range fields[1:] {
				maps[len(maps)-1].flags[fl] = true
			}
		case fields[0] == "AnonHugePages:" && len(maps) > 0 && len(fields) > 1:
			maps[len(maps)-1].anonHugeKB, _ = strconv.Atoi(fields[1])
		case strings.Contains(fields[0], "-") && !strings.HasSuffix(fields[0], ":"):
			lo, hi, _ := strings.Cut(fields[0], "-")
			l, err1 := strconv.ParseUint(lo, 16, 64)
			h, err2 := strconv.ParseUint(hi, 16, 64)
			if err1 == nil && err2 == nil {
				maps = append(maps, mapping{lo: uintptr(l), hi: uintptr(h), flags: map[string]bool{}})
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return maps
}
