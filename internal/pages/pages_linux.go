// Package pages maps fresh memory's pages in bulk: a first write to an
// anonymous page faults (1.5–3 µs a 4 KiB page on the VMs measured),
// which a kernel's first run or a plan's load pays page by page unless
// the range is populated at once.
package pages

import (
	"os"
	"syscall"
	"unsafe"
)

// MinPopulate is the smallest allocation populated: below it the few
// faults cost less than the call.
const MinPopulate = 64 << 10

// madvPopulateWrite is Linux's MADV_POPULATE_WRITE (5.14 and later).
const madvPopulateWrite = 23

// Populate asks the kernel to map b's whole pages now, in one call. A
// fresh allocation's pages otherwise fault one at a time as a kernel
// first writes them, 1.5–3 µs each on the VMs measured (a 4 MiB output
// made gemm_f32_1024's first run milliseconds slower than the next),
// where the kernel maps a range in bulk for a fraction of that. Pages
// already mapped (reused memory) are left as they are. An older kernel
// refuses the advice, and the pages fault as before.
func Populate(b []byte) {
	if len(b) < MinPopulate {
		return
	}
	page := uintptr(os.Getpagesize())
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	start, end := (lo+page-1)&^(page-1), (lo+uintptr(len(b)))&^(page-1)
	if end > start {
		syscall.Syscall(syscall.SYS_MADVISE, start, end-start, madvPopulateWrite)
	}
}
