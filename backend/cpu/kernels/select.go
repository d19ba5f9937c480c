package kernels

// Assembly reports whether the assembly kernels are in use (false on
// other architectures, with -tags purego, without AVX2+FMA, or with
// AXLE_KERNELS=purego).
func Assembly() bool { return useAsm }
