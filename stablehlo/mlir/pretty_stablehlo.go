package mlir

import "strings"

// prettySpecs holds every pretty form that a spec string describes (see
// pretty_spec.go), taken from the assemblyFormat of each op in openxla/
// stablehlo's StablehloOps.td, ChloOps.td and tests/CheckOps.td. Ops
// without an assemblyFormat there (gather, scatter, sort, map, if, case,
// reduce_window, select_and_scatter, all_reduce and the other collectives,
// infeed, outfeed, send, recv, triangular_solve, batch_norm_*, ...) are
// printed in generic form only and need no entry.
var prettySpecs = map[string]string{
	"stablehlo.iota":                     "dim = iota_dimension=i64 {} :res",
	"stablehlo.dynamic_iota":             "$ , dim = iota_dimension=i64 {} :fn",
	"stablehlo.create_token":             "{} :res",
	"stablehlo.replica_id":               "{} :res",
	"stablehlo.partition_id":             "{} :res",
	"stablehlo.is_finite":                "$... {} :fn",
	"stablehlo.complex":                  "$... {} :complex",
	"stablehlo.after_all":                "$... {} :same",
	"stablehlo.get_tuple_element":        "$ [ index=i32 ] {} :fn",
	"stablehlo.tuple":                    "$... {} :tuple",
	"stablehlo.dynamic_slice":            "$ , $* sizes = slice_sizes=arr {} :fn",
	"stablehlo.dynamic_update_slice":     "$... {} :fn",
	"stablehlo.bitcast_convert":          "$... {} :fn",
	"stablehlo.broadcast":                "$ , sizes = broadcast_sizes=arr {} :fn",
	"stablehlo.broadcast_in_dim":         "$ , dims = broadcast_dimensions=arr {} :fn",
	"stablehlo.dynamic_broadcast_in_dim": "$ , $ , dims = broadcast_dimensions=arr {} :fn",
	"stablehlo.cholesky":                 "$ ?lower:lower=bool {} :same",
	"stablehlo.clamp":                    "$ , $ , $ {} :same",
	"stablehlo.concatenate":              "$* dim = dimension=i64 {} :fn",
	"stablehlo.custom_call":              "call_target_name=sym ( $... ) {} :fn",
	"stablehlo.einsum":                   "$ , $ , config = einsum_config=str {} :fn",
	"stablehlo.unary_einsum":             "$ , config = einsum_config=str {} :fn",
	"stablehlo.fft":                      "$ , type = fft_type=enum:stablehlo.fft_type , length = fft_length=arr {} :fn",
	"stablehlo.get_dimension_size":       "$ , dim = dimension=i64 {} :fn",
	"stablehlo.set_dimension_size":       "$ , $ , dim = dimension=i64 {} :fn",
	"stablehlo.reshape":                  "$... {} :fn",
	"stablehlo.dynamic_reshape":          "$... {} :fn",
	"stablehlo.real_dynamic_slice":       "$... {} :fn",
	"stablehlo.dynamic_pad":              "$... {} :fn",
	"stablehlo.select":                   "$... {} :select",
	"stablehlo.reverse":                  "$ , dims = dimensions=arr {} :same",
	"stablehlo.pad":                      "$ , $ , low = edge_padding_low=arr , high = edge_padding_high=arr , interior = interior_padding=arr {} :fn",
	"stablehlo.transpose":                "$ , dims = permutation=arr {} :fn",
	"stablehlo.return":                   "$... {} :opt",
	"stablehlo.rng":                      "$ , $ , $ , distribution = rng_distribution=enum:stablehlo.rng_distribution {} :fn",
	"stablehlo.rng_bit_generator":        "$ , algorithm = rng_algorithm=enum:stablehlo.rng_algorithm {} :fn",

	"chlo.top_k":            "( $ , k = k=i64 ?is_stable:is_stable=bool ) {} :chlo1",
	"chlo.next_after":       "$ , $ {} :chlo2",
	"chlo.polygamma":        "$ , $ {} :chlo2",
	"chlo.zeta":             "$ , $ {} :chlo2",
	"chlo.mulhi":            "$ , $ {} :chlo2",
	"chlo.broadcast_select": "$ , $ , $ {} :fn",

	"check.expect_almost_eq_const": "$ , value=attr ?tolerance:tolerance=f64 {} :none",
	"check.expect_almost_eq":       "$ , $ ?tolerance:tolerance=f64 {} :one",
	"check.expect_eq_const":        "$ , value=attr {} :none",
	"check.expect_eq":              "$ , $ {} :one",
	"check.expect_close":           "$ , $ , max_ulp_difference = max_ulp_difference=u64 ?min_ulp_difference:min_ulp_difference=u64 :close",
	"check.expect_serialized_eq":   "$ , probe_id = probe_id=str ?iter:iteration=u32 {} :one",

	"interpreter.probe": "$ , probe_id = probe_id=str {} :same",
	"interpreter.print": "$ {} :one",
}

// Elementwise ops share one form each: `$x attr-dict : T` with the
// SameOperandsAndResultType signature (or a function type), CHLO's unary
// ops `: T -> R`, its broadcasting binary ops `: (T, U) -> R`.
var (
	stablehloUnary = "abs cbrt ceil convert count_leading_zeros cosine exponential exponential_minus_one " +
		"floor imag log log_plus_one logistic not negate popcnt real round_nearest_afz round_nearest_even " +
		"rsqrt sign sine sqrt tan tanh uniform_quantize uniform_dequantize"
	stablehloBinary = "add atan2 divide maximum minimum multiply power remainder shift_left " +
		"shift_right_arithmetic shift_right_logical subtract and or xor"
	chloUnary = "_asin_acos_kernel acos acosh asin asinh atan atanh bessel_i1e conj cosh sinh tan digamma " +
		"erf erf_inv erfc is_inf is_neg_inf is_pos_inf lgamma square"
	chloBroadcast = "broadcast_add broadcast_atan2 broadcast_divide broadcast_maximum broadcast_minimum " +
		"broadcast_multiply broadcast_next_after broadcast_polygamma broadcast_power broadcast_remainder " +
		"broadcast_shift_left broadcast_shift_right_arithmetic broadcast_shift_right_logical " +
		"broadcast_subtract broadcast_zeta broadcast_and broadcast_or broadcast_xor broadcast_complex " +
		"broadcast_compare"
)

func init() {
	for _, n := range strings.Fields(stablehloUnary) {
		prettySpecs["stablehlo."+n] = "$ {} :same"
	}
	for _, n := range strings.Fields(stablehloBinary) {
		prettySpecs["stablehlo."+n] = "$ , $ {} :same"
	}
	for _, n := range strings.Fields(chloUnary) {
		prettySpecs["chlo."+n] = "$ {} :chlo1"
	}
	for _, n := range strings.Fields(chloBroadcast) {
		prettySpecs["chlo."+n] = "$ , $ {} :fn"
	}
	for name, spec := range prettySpecs {
		// This init runs after the other pretty_*.go files' (Go runs them
		// in file name order), so a form defined twice shows here.
		if _, dup := prettyOps[name]; dup {
			panic("mlir: two pretty forms for " + name)
		}
		prettyOps[name] = specOp(spec)
	}
}
