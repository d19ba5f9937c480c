package kernels

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestL2BytesMatchesSysfs: the L2 size read with CPUID is the one Linux
// reports for CPU 0's level-2 cache.
func TestL2BytesMatchesSysfs(t *testing.T) {
	got := L2Bytes()
	if got == 0 {
		t.Skip("no L2 size from CPUID in this build")
	}
	level, err1 := os.ReadFile("/sys/devices/system/cpu/cpu0/cache/index2/level")
	size, err2 := os.ReadFile("/sys/devices/system/cpu/cpu0/cache/index2/size")
	if err1 != nil || err2 != nil || strings.TrimSpace(string(level)) != "2" {
		t.Skip("no level-2 cache in sysfs")
	}
	s := strings.TrimSpace(string(size))
	mult := 1
	if k, ok := strings.CutSuffix(s, "K"); ok {
		s, mult = k, 1<<10
	} else if m, ok := strings.CutSuffix(s, "M"); ok {
		s, mult = m, 1<<20
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Skipf("sysfs size %q", size)
	}
	if want := n * mult; got != want {
		t.Errorf("L2Bytes() = %d, sysfs says %d", got, want)
	}
}
