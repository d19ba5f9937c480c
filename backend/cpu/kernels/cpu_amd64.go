//go:build amd64 && !purego

package kernels

import (
	"os"

	"golang.org/x/sys/cpu"
)

// useAsm says whether the AVX2+FMA kernels run.
var useAsm = cpu.X86.HasAVX2 && cpu.X86.HasFMA && os.Getenv("AXLE_KERNELS") != "purego"
