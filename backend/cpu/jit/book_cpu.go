package jit

import (
	"strings"

	"golang.org/x/sys/cpu"
)

// A book's entries say which CPU features their code needs, by name, so
// that a book recorded on one machine loads on another: entries this
// machine cannot run are skipped (and their programs get tile programs).

// featuresFor lists the features of 8-lane code (AVX2 and FMA) or wide
// code (AVX-512 F and DQ besides: wideCode's test).
func featuresFor(wide bool) string {
	if wide {
		return "avx2,fma,avx512f,avx512dq"
	}
	return "avx2,fma"
}

// featuresOf lists the features of p's code for target t: with f16
// arrays or rounding, F16C's besides.
func featuresOf(p *Program, t target) string {
	if p.usesF16() {
		return featuresFor(t.wide) + ",f16c"
	}
	return featuresFor(t.wide)
}

// runnable reports whether this machine has every feature listed; a
// name it does not know (a later generator's) counts as missing.
func runnable(features string) bool {
	for name := range strings.SplitSeq(features, ",") {
		if !hasFeature(name) {
			return false
		}
	}
	return true
}

// hasF16C is cpu.X86.HasF16C but for SetF16C.
var hasF16C = cpu.X86.HasF16C

// SetF16C lets code use F16C or not, as if the machine lacked it (it
// cannot give a machine F16C), and returns the previous setting: tests of
// the callers' fallbacks turn it off. Compiles in flight must not race
// with it.
func SetF16C(on bool) (was bool) {
	was, hasF16C = hasF16C, on && cpu.X86.HasF16C
	return was
}

func hasFeature(name string) bool {
	switch name {
	case "avx2":
		return cpu.X86.HasAVX2
	case "fma":
		return cpu.X86.HasFMA
	case "avx512f":
		return cpu.X86.HasAVX512F
	case "avx512dq":
		return cpu.X86.HasAVX512DQ
	case "f16c":
		return hasF16C
	}
	return false
}
