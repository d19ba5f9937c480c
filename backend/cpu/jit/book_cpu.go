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
	}
	return false
}
