// Package npy reads and writes NumPy's array files as HLO literals: `.npy`
// (format versions 1.0, 2.0 and 3.0, C or Fortran order, either byte
// order) and `.npz`, the zip archives of `.npy` members that np.savez
// (stored) and np.savez_compressed (deflated) write.
//
// Element types map one to one:
//
//	|b1 pred   |i1 s8   <i2 s16   <i4 s32   <i8 s64
//	           |u1 u8   <u2 u16   <u4 u32   <u8 u64
//	<f2 f16    <f4 f32  <f8 f64   <c8 c64   <c16 c128
//	<V2 bf16
//
// NumPy has no bfloat16. JAX's (ml_dtypes') bfloat16 is a NumPy dtype of
// kind 'V', so np.save records it as the two-byte void type `<V2`, and
// jnp.load views a `V2` array as bfloat16 again: this package does the same
// both ways (and also takes the descr "bfloat16" that some tools write by
// hand). Object arrays (`|O`, pickled Python objects), structured dtypes,
// strings and datetimes are refused with an error, as are the HLO types
// NumPy cannot hold (s2, s4, u2, u4, the f8 and f4 types).
//
// Malformed headers, truncated bodies and unsupported types are errors,
// never panics; errors from the file functions name the file and, for an
// archive, the member.
package npy
