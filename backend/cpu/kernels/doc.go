// Package kernels holds Axle's CPU compute kernels: packed, cache-blocked
// GEMM with AVX2+FMA and AVX-512 micro-kernels (the BLIS design), the
// 8-bit GEMM on the same blocking (VPDPBUSD quads where the CPU has VNNI,
// VPMADDWD on s16 pairs elsewhere), the bf16 GEMM and convolution on
// VDPBF16PS (gemm_bf16.go, conv_bf16.go) where the CPU's policy prefers
// it (cpu_model_amd64.go), f32 convolution (direct, implicit im2col,
// depthwise), reductions and vector math, and the Philox random bit
// generator eight blocks a vector. Every assembly kernel has a
// pure-Go twin with the same results (the AVX2 rows kernels of narrow
// products, gemm_rows.go, give the 6×16 kernels' bits, whose twin is
// theirs); the assembly is used on amd64 when
// the CPU has AVX2 and FMA, unless the build has the purego tag or the
// environment says AXLE_KERNELS=purego (for A/B runs and tests). With
// AXLE_DENORMALS=flush the packed GEMM's blocks flush subnormal values
// to zero, as XLA's CPU client does (denormals.go).
//
// The assembly is generated with avo from the programs under _asm (a
// separate module, so avo is not a dependency of Axle itself):
//
//	go generate ./backend/cpu/kernels
package kernels

//go:generate sh -c "cd _asm && go run ./gemm -out ../gemm_amd64.s -stubs ../gemm_stub_amd64.go -pkg kernels"
