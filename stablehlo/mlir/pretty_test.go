package mlir

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// prettyPairs are hand-written pairs: an op in pretty syntax, and the same
// op in generic syntax, the generic one written from StablehloOps.td's
// argument lists and the printers in StablehloOps.cpp / AssemblyFormat.cpp
// (openxla/stablehlo), not printed by this package. Both are the body of
// `func.func @f(ARGS)`; the whole modules must be equal but for positions,
// block labels and value names.
var prettyPairs = []struct {
	name, args, pretty, generic string
}{
	{"add same type", "%a: tensor<2xf32>, %b: tensor<2xf32>",
		`%0 = stablehlo.add %a, %b : tensor<2xf32>`,
		`%0 = "stablehlo.add"(%a, %b) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>`},
	{"add function type", "%a: tensor<2xf32>, %b: tensor<2xf32>",
		`%0 = stablehlo.add %a, %b : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>`,
		`%0 = "stablehlo.add"(%a, %b) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>`},
	{"abs", "%a: tensor<2xf32>",
		`%0 = stablehlo.abs %a : tensor<2xf32>`,
		`%0 = "stablehlo.abs"(%a) : (tensor<2xf32>) -> tensor<2xf32>`},
	{"convert", "%a: tensor<2xi32>",
		`%0 = stablehlo.convert %a : (tensor<2xi32>) -> tensor<2xf32>`,
		`%0 = "stablehlo.convert"(%a) : (tensor<2xi32>) -> tensor<2xf32>`},
	{"real", "%a: tensor<2xcomplex<f32>>",
		`%0 = stablehlo.real %a : (tensor<2xcomplex<f32>>) -> tensor<2xf32>`,
		`%0 = "stablehlo.real"(%a) : (tensor<2xcomplex<f32>>) -> tensor<2xf32>`},
	{"complex", "%a: tensor<2xf32>, %b: tensor<2xf32>",
		`%0 = stablehlo.complex %a, %b : tensor<2xcomplex<f32>>`,
		`%0 = "stablehlo.complex"(%a, %b) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xcomplex<f32>>`},
	{"is_finite", "%a: tensor<2xf32>",
		`%0 = stablehlo.is_finite %a : (tensor<2xf32>) -> tensor<2xi1>`,
		`%0 = "stablehlo.is_finite"(%a) : (tensor<2xf32>) -> tensor<2xi1>`},
	{"constant", "",
		`%0 = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>`,
		`%0 = "stablehlo.constant"() <{value = dense<[1.0, 2.0]> : tensor<2xf32>}> : () -> tensor<2xf32>`},
	{"compare with type", "%a: tensor<2xf32>, %b: tensor<2xf32>",
		`%0 = stablehlo.compare  LT, %a, %b,  FLOAT : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>`,
		`%0 = "stablehlo.compare"(%a, %b) {comparison_direction = #stablehlo<comparison_direction LT>, compare_type = #stablehlo<comparison_type FLOAT>} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>`},
	{"compare without type", "%a: tensor<2xi32>, %b: tensor<2xi32>",
		`%0 = stablehlo.compare EQ, %a, %b : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi1>`,
		`%0 = "stablehlo.compare"(%a, %b) <{comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi1>`},
	{"select", "%p: tensor<2xi1>, %a: tensor<2xf32>, %b: tensor<2xf32>",
		`%0 = stablehlo.select %p, %a, %b : tensor<2xi1>, tensor<2xf32>`,
		`%0 = "stablehlo.select"(%p, %a, %b) : (tensor<2xi1>, tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>`},
	{"clamp", "%lo: tensor<2xf32>, %a: tensor<2xf32>, %hi: tensor<2xf32>",
		`%0 = stablehlo.clamp %lo, %a, %hi : tensor<2xf32>`,
		`%0 = "stablehlo.clamp"(%lo, %a, %hi) : (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>`},
	{"broadcast_in_dim", "%a: tensor<2xf32>",
		`%0 = stablehlo.broadcast_in_dim %a, dims = [1] : (tensor<2xf32>) -> tensor<3x2xf32>`,
		`%0 = "stablehlo.broadcast_in_dim"(%a) <{broadcast_dimensions = array<i64: 1>}> : (tensor<2xf32>) -> tensor<3x2xf32>`},
	{"broadcast_in_dim scalar", "%a: tensor<f32>",
		`%0 = stablehlo.broadcast_in_dim %a, dims = [] : (tensor<f32>) -> tensor<3xf32>`,
		`%0 = "stablehlo.broadcast_in_dim"(%a) {broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<3xf32>`},
	{"broadcast", "%a: tensor<2xf32>",
		`%0 = stablehlo.broadcast %a, sizes = [3] : (tensor<2xf32>) -> tensor<3x2xf32>`,
		`%0 = "stablehlo.broadcast"(%a) {broadcast_sizes = array<i64: 3>} : (tensor<2xf32>) -> tensor<3x2xf32>`},
	{"dynamic_broadcast_in_dim", "%a: tensor<?xf32>, %s: tensor<2xindex>",
		`%0 = stablehlo.dynamic_broadcast_in_dim %a, %s, dims = [1] : (tensor<?xf32>, tensor<2xindex>) -> tensor<?x?xf32>`,
		`%0 = "stablehlo.dynamic_broadcast_in_dim"(%a, %s) {broadcast_dimensions = array<i64: 1>} : (tensor<?xf32>, tensor<2xindex>) -> tensor<?x?xf32>`},
	{"reshape", "%a: tensor<2x3xf32>",
		`%0 = stablehlo.reshape %a : (tensor<2x3xf32>) -> tensor<6xf32>`,
		`%0 = "stablehlo.reshape"(%a) : (tensor<2x3xf32>) -> tensor<6xf32>`},
	{"transpose", "%a: tensor<2x3xf32>",
		`%0 = stablehlo.transpose %a, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>`,
		`%0 = "stablehlo.transpose"(%a) {permutation = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>`},
	{"reverse", "%a: tensor<2x3xf32>",
		`%0 = stablehlo.reverse %a, dims = [0, 1] : tensor<2x3xf32>`,
		`%0 = "stablehlo.reverse"(%a) {dimensions = array<i64: 0, 1>} : (tensor<2x3xf32>) -> tensor<2x3xf32>`},
	{"slice", "%a: tensor<4x8xf32>",
		`%0 = stablehlo.slice %a [0:2, 1:7:2] : (tensor<4x8xf32>) -> tensor<2x3xf32>`,
		`%0 = "stablehlo.slice"(%a) <{start_indices = array<i64: 0, 1>, limit_indices = array<i64: 2, 7>, strides = array<i64: 1, 2>}> : (tensor<4x8xf32>) -> tensor<2x3xf32>`},
	{"dynamic_slice", "%a: tensor<4x8xf32>, %i: tensor<i64>, %j: tensor<i64>",
		`%0 = stablehlo.dynamic_slice %a, %i, %j, sizes = [1, 2] : (tensor<4x8xf32>, tensor<i64>, tensor<i64>) -> tensor<1x2xf32>`,
		`%0 = "stablehlo.dynamic_slice"(%a, %i, %j) {slice_sizes = array<i64: 1, 2>} : (tensor<4x8xf32>, tensor<i64>, tensor<i64>) -> tensor<1x2xf32>`},
	{"dynamic_update_slice", "%a: tensor<4xf32>, %u: tensor<2xf32>, %i: tensor<i64>",
		`%0 = stablehlo.dynamic_update_slice %a, %u, %i : (tensor<4xf32>, tensor<2xf32>, tensor<i64>) -> tensor<4xf32>`,
		`%0 = "stablehlo.dynamic_update_slice"(%a, %u, %i) : (tensor<4xf32>, tensor<2xf32>, tensor<i64>) -> tensor<4xf32>`},
	{"concatenate", "%a: tensor<2xf32>, %b: tensor<3xf32>",
		`%0 = stablehlo.concatenate %a, %b, dim = 0 : (tensor<2xf32>, tensor<3xf32>) -> tensor<5xf32>`,
		`%0 = "stablehlo.concatenate"(%a, %b) {dimension = 0 : i64} : (tensor<2xf32>, tensor<3xf32>) -> tensor<5xf32>`},
	{"iota", "",
		`%0 = stablehlo.iota dim = 1 : tensor<2x4xi32>`,
		`%0 = "stablehlo.iota"() {iota_dimension = 1 : i64} : () -> tensor<2x4xi32>`},
	{"dynamic_iota", "%s: tensor<1xi64>",
		`%0 = stablehlo.dynamic_iota %s, dim = 0 : (tensor<1xi64>) -> tensor<?xi32>`,
		`%0 = "stablehlo.dynamic_iota"(%s) {iota_dimension = 0 : i64} : (tensor<1xi64>) -> tensor<?xi32>`},
	{"pad", "%a: tensor<2x3xf32>, %v: tensor<f32>",
		`%0 = stablehlo.pad %a, %v, low = [1, 0], high = [2, 1], interior = [1, 0] : (tensor<2x3xf32>, tensor<f32>) -> tensor<6x4xf32>`,
		`%0 = "stablehlo.pad"(%a, %v) {edge_padding_low = array<i64: 1, 0>, edge_padding_high = array<i64: 2, 1>, interior_padding = array<i64: 1, 0>} : (tensor<2x3xf32>, tensor<f32>) -> tensor<6x4xf32>`},
	{"get_dimension_size", "%a: tensor<?xf32>",
		`%0 = stablehlo.get_dimension_size %a, dim = 0 : (tensor<?xf32>) -> tensor<i32>`,
		`%0 = "stablehlo.get_dimension_size"(%a) {dimension = 0 : i64} : (tensor<?xf32>) -> tensor<i32>`},
	{"dot with precision", "%a: tensor<2x3xf32>, %b: tensor<3x4xf32>",
		`%0 = stablehlo.dot %a, %b, precision = [DEFAULT, HIGHEST] : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>`,
		`%0 = "stablehlo.dot"(%a, %b) {precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision HIGHEST>]} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>`},
	{"dot_general contracting", "%a: tensor<2x3xf32>, %b: tensor<3x4xf32>",
		`%0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>`,
		`%0 = "stablehlo.dot_general"(%a, %b) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>`},
	{"dot_general batching precision", "%a: tensor<5x2x3xf32>, %b: tensor<5x3x4xf32>",
		`%0 = stablehlo.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [2] x [1], precision = [DEFAULT, HIGHEST] : (tensor<5x2x3xf32>, tensor<5x3x4xf32>) -> tensor<5x2x4xf32>`,
		`%0 = "stablehlo.dot_general"(%a, %b) {dot_dimension_numbers = #stablehlo.dot<
		    lhs_batching_dimensions = [0],
		    rhs_batching_dimensions = [0],
		    lhs_contracting_dimensions = [2],
		    rhs_contracting_dimensions = [1]
		  >, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision HIGHEST>]} : (tensor<5x2x3xf32>, tensor<5x3x4xf32>) -> tensor<5x2x4xf32>`},
	{"dot_general algorithm", "%a: tensor<2x3xf32>, %b: tensor<3x4xf32>",
		`%0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0], algorithm = <lhs_precision_type = tf32, rhs_precision_type = tf32, accumulation_type = f32, lhs_component_count = 1, rhs_component_count = 1, num_primitive_operations = 3, allow_imprecise_accumulation = false> : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>`,
		`%0 = "stablehlo.dot_general"(%a, %b) {algorithm = #stablehlo.dot_algorithm<lhs_precision_type = tf32, rhs_precision_type = tf32, accumulation_type = f32, lhs_component_count = 1, rhs_component_count = 1, num_primitive_operations = 3, allow_imprecise_accumulation = false>, dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>`},
	{"convolution", "%x: tensor<1x8x8x3xf32>, %k: tensor<3x3x3x16xf32>",
		`%0 = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [2, 1], pad = [[1, 1], [1, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 2], reverse = [0, 1]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]} : (tensor<1x8x8x3xf32>, tensor<3x3x3x16xf32>) -> tensor<1x4x6x16xf32>`,
		`%0 = "stablehlo.convolution"(%x, %k) {batch_group_count = 1 : i64, dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>, feature_group_count = 1 : i64, lhs_dilation = array<i64: 1, 1>, padding = dense<1> : tensor<2x2xi64>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>], rhs_dilation = array<i64: 1, 2>, window_reversal = array<i1: false, true>, window_strides = array<i64: 2, 1>} : (tensor<1x8x8x3xf32>, tensor<3x3x3x16xf32>) -> tensor<1x4x6x16xf32>`},
	{"convolution 1d empty window", "%x: tensor<1x3x8xf32>, %k: tensor<5x3x2xf32>",
		`%0 = stablehlo.convolution(%x, %k) dim_numbers = [b, f, 0]x[o, i, 0]->[b, f, 0], window = {pad = [[0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x3x8xf32>, tensor<5x3x2xf32>) -> tensor<1x5x8xf32>`,
		`%0 = "stablehlo.convolution"(%x, %k) {batch_group_count = 1 : i64, dimension_numbers = #stablehlo.conv<[b, f, 0]x[o, i, 0]->[b, f, 0]>, feature_group_count = 1 : i64, padding = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<1x3x8xf32>, tensor<5x3x2xf32>) -> tensor<1x5x8xf32>`},
	{"convolution empty window lists", "%x: tensor<2x3xf32>, %k: tensor<3x4xf32>",
		`%0 = stablehlo.convolution(%x, %k) dim_numbers = [b, f] x [i, o] -> [b, f], window = {stride = [], pad = [], lhs_dilate = [], rhs_dilate = [], reverse = []} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>`,
		`%0 = "stablehlo.convolution"(%x, %k) {batch_group_count = 1 : i64, dimension_numbers = #stablehlo.conv<[b, f]x[i, o]->[b, f]>, feature_group_count = 1 : i64, lhs_dilation = array<i64>, padding = dense<> : tensor<0x2xi64>, rhs_dilation = array<i64>, window_reversal = array<i1>, window_strides = array<i64>} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>`},
	{"reduce applies", "%x: tensor<2x3xf32>, %z: tensor<f32>",
		`%0 = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [1] : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>`,
		`%0 = "stablehlo.reduce"(%x, %z) <{dimensions = array<i64: 1>}> ({
		  ^bb0(%l: tensor<f32>, %r: tensor<f32>):
		    %s = "stablehlo.add"(%l, %r) : (tensor<f32>, tensor<f32>) -> tensor<f32>
		    "stablehlo.return"(%s) : (tensor<f32>) -> ()
		  }) : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>`},
	{"reduce region", "%x: tensor<4xf32>, %y: tensor<4xi32>, %zx: tensor<f32>, %zy: tensor<i32>",
		`%0:2 = stablehlo.reduce(%x init: %zx), (%y init: %zy) across dimensions = [0] : (tensor<4xf32>, tensor<4xi32>, tensor<f32>, tensor<i32>) -> (tensor<f32>, tensor<i32>)
		 reducer(%a: tensor<f32>, %c: tensor<f32>) (%b: tensor<i32>, %d: tensor<i32>) {
		  %m = stablehlo.maximum %a, %c : tensor<f32>
		  %n = stablehlo.minimum %b, %d : tensor<i32>
		  stablehlo.return %m, %n : tensor<f32>, tensor<i32>
		}`,
		`%0:2 = "stablehlo.reduce"(%x, %y, %zx, %zy) ({
		  ^bb0(%a: tensor<f32>, %b: tensor<i32>, %c: tensor<f32>, %d: tensor<i32>):
		    %m = "stablehlo.maximum"(%a, %c) : (tensor<f32>, tensor<f32>) -> tensor<f32>
		    %n = "stablehlo.minimum"(%b, %d) : (tensor<i32>, tensor<i32>) -> tensor<i32>
		    "stablehlo.return"(%m, %n) : (tensor<f32>, tensor<i32>) -> ()
		  }) {dimensions = array<i64: 0>} : (tensor<4xf32>, tensor<4xi32>, tensor<f32>, tensor<i32>) -> (tensor<f32>, tensor<i32>)`},
	{"while", "%i: tensor<i64>, %x: tensor<f32>",
		`%0:2 = stablehlo.while(%ia = %i, %xa = %x) : tensor<i64>, tensor<f32>
		 cond {
		  %c = stablehlo.compare LT, %ia, %ia : (tensor<i64>, tensor<i64>) -> tensor<i1>
		  stablehlo.return %c : tensor<i1>
		} do {
		  %y = stablehlo.add %xa, %xa : tensor<f32>
		  stablehlo.return %ia, %y : tensor<i64>, tensor<f32>
		}`,
		`%0:2 = "stablehlo.while"(%i, %x) ({
		  ^bb0(%ia: tensor<i64>, %xa: tensor<f32>):
		    %c = "stablehlo.compare"(%ia, %ia) {comparison_direction = #stablehlo<comparison_direction LT>} : (tensor<i64>, tensor<i64>) -> tensor<i1>
		    "stablehlo.return"(%c) : (tensor<i1>) -> ()
		  }, {
		  ^bb0(%ia: tensor<i64>, %xa: tensor<f32>):
		    %y = "stablehlo.add"(%xa, %xa) : (tensor<f32>, tensor<f32>) -> tensor<f32>
		    "stablehlo.return"(%ia, %y) : (tensor<i64>, tensor<f32>) -> ()
		  }) : (tensor<i64>, tensor<f32>) -> (tensor<i64>, tensor<f32>)`},
	{"custom_call", "%a: tensor<2xf32>",
		`%0 = stablehlo.custom_call @foo.bar(%a) {api_version = 2 : i32, backend_config = "cfg", has_side_effect = true} : (tensor<2xf32>) -> tensor<2xf32>`,
		`%0 = "stablehlo.custom_call"(%a) {api_version = 2 : i32, backend_config = "cfg", call_target_name = "foo.bar", has_side_effect = true} : (tensor<2xf32>) -> tensor<2xf32>`},
	{"custom_call no results", "%a: tensor<2xf32>, %b: tensor<2xf32>",
		`stablehlo.custom_call @check.expect_eq(%a, %b) {has_side_effect = true} : (tensor<2xf32>, tensor<2xf32>) -> ()`,
		`"stablehlo.custom_call"(%a, %b) {call_target_name = "check.expect_eq", has_side_effect = true} : (tensor<2xf32>, tensor<2xf32>) -> ()`},
	{"tuple and get_tuple_element", "%a: tensor<f32>, %b: tensor<i32>",
		`%t = stablehlo.tuple %a, %b : tuple<tensor<f32>, tensor<i32>>
		 %0 = stablehlo.get_tuple_element %t[1] : (tuple<tensor<f32>, tensor<i32>>) -> tensor<i32>`,
		`%t = "stablehlo.tuple"(%a, %b) : (tensor<f32>, tensor<i32>) -> tuple<tensor<f32>, tensor<i32>>
		 %0 = "stablehlo.get_tuple_element"(%t) {index = 1 : i32} : (tuple<tensor<f32>, tensor<i32>>) -> tensor<i32>`},
	{"fft", "%a: tensor<8xf32>",
		`%0 = stablehlo.fft %a, type =  RFFT, length = [8] : (tensor<8xf32>) -> tensor<5xcomplex<f32>>`,
		`%0 = "stablehlo.fft"(%a) {fft_length = array<i64: 8>, fft_type = #stablehlo<fft_type RFFT>} : (tensor<8xf32>) -> tensor<5xcomplex<f32>>`},
	{"rng_bit_generator", "%s: tensor<2xui64>",
		`%0, %1 = stablehlo.rng_bit_generator %s, algorithm =  THREE_FRY : (tensor<2xui64>) -> (tensor<2xui64>, tensor<4xui32>)`,
		`%0:2 = "stablehlo.rng_bit_generator"(%s) {rng_algorithm = #stablehlo<rng_algorithm THREE_FRY>} : (tensor<2xui64>) -> (tensor<2xui64>, tensor<4xui32>)`},
	{"rng", "%a: tensor<f32>, %b: tensor<f32>, %s: tensor<1xi64>",
		`%0 = stablehlo.rng %a, %b, %s, distribution = UNIFORM : (tensor<f32>, tensor<f32>, tensor<1xi64>) -> tensor<4xf32>`,
		`%0 = "stablehlo.rng"(%a, %b, %s) {rng_distribution = #stablehlo<rng_distribution UNIFORM>} : (tensor<f32>, tensor<f32>, tensor<1xi64>) -> tensor<4xf32>`},
	{"reduce_precision", "%a: tensor<2xf32>",
		`%0 = stablehlo.reduce_precision %a, format = e5m10 : tensor<2xf32>`,
		`%0 = "stablehlo.reduce_precision"(%a) {exponent_bits = 5 : i32, mantissa_bits = 10 : i32} : (tensor<2xf32>) -> tensor<2xf32>`},
	{"optimization_barrier", "%a: tensor<2xf32>, %b: tensor<i32>",
		`%0, %1 = stablehlo.optimization_barrier %a, %b : tensor<2xf32>, tensor<i32>`,
		`%0:2 = "stablehlo.optimization_barrier"(%a, %b) : (tensor<2xf32>, tensor<i32>) -> (tensor<2xf32>, tensor<i32>)`},
	{"after_all", "%t: !stablehlo.token, %u: !stablehlo.token",
		`%0 = stablehlo.after_all %t, %u : !stablehlo.token
		 %1 = stablehlo.after_all : !stablehlo.token`,
		`%0 = "stablehlo.after_all"(%t, %u) : (!stablehlo.token, !stablehlo.token) -> !stablehlo.token
		 %1 = "stablehlo.after_all"() : () -> !stablehlo.token`},
	{"replica_id", "",
		`%0 = stablehlo.replica_id : tensor<ui32>`,
		`%0 = "stablehlo.replica_id"() : () -> tensor<ui32>`},
	{"cholesky", "%a: tensor<3x3xf32>",
		`%0 = stablehlo.cholesky %a, lower = true : tensor<3x3xf32>`,
		`%0 = "stablehlo.cholesky"(%a) {lower = true} : (tensor<3x3xf32>) -> tensor<3x3xf32>`},
	{"einsum", "%a: tensor<2x3xf32>, %b: tensor<3xf32>",
		`%0 = stablehlo.einsum %a, %b, config = "ab,b->a" : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2xf32>`,
		`%0 = "stablehlo.einsum"(%a, %b) {einsum_config = "ab,b->a"} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2xf32>`},
	{"composite", "%a: tensor<i64>",
		`%0 = stablehlo.composite "my.add_n" %a {composite_attributes = {n = 2 : i64}, decomposition = @add_n} : (tensor<i64>) -> tensor<i64>`,
		`%0 = "stablehlo.composite"(%a) {composite_attributes = {n = 2 : i64}, decomposition = @add_n, name = "my.add_n"} : (tensor<i64>) -> tensor<i64>`},
	{"composite with a region", "%a: tensor<i64>",
		`%0 = stablehlo.composite "my.double" %a ({
		   %1 = stablehlo.add %a, %a : tensor<i64>
		   stablehlo.return %1 : tensor<i64>
		 }) {decomposition = @double, version = 1 : i32} : (tensor<i64>) -> tensor<i64>`,
		`%0 = "stablehlo.composite"(%a) ({
		   %1 = "stablehlo.add"(%a, %a) : (tensor<i64>, tensor<i64>) -> tensor<i64>
		   "stablehlo.return"(%1) : (tensor<i64>) -> ()
		 }) {decomposition = @double, name = "my.double", version = 1 : i32} : (tensor<i64>) -> tensor<i64>`},
	{"uniform_quantize", "%a: tensor<2xf32>",
		`%0 = stablehlo.uniform_quantize %a : (tensor<2xf32>) -> tensor<2x!quant.uniform<i8:f32, 0.5:-3>>`,
		`%0 = "stablehlo.uniform_quantize"(%a) : (tensor<2xf32>) -> tensor<2x!quant.uniform<i8:f32, 5.000000e-01:-3>>`},
	{"dynamic_pad", "%a: tensor<?xf32>, %v: tensor<f32>, %l: tensor<1xi64>, %h: tensor<1xi64>, %i: tensor<1xi64>",
		`%0 = stablehlo.dynamic_pad %a, %v, %l, %h, %i : (tensor<?xf32>, tensor<f32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?xf32>`,
		`%0 = "stablehlo.dynamic_pad"(%a, %v, %l, %h, %i) : (tensor<?xf32>, tensor<f32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?xf32>`},
	{"dynamic_reshape", "%a: tensor<?xf32>, %s: tensor<2xi64>",
		`%0 = stablehlo.dynamic_reshape %a, %s : (tensor<?xf32>, tensor<2xi64>) -> tensor<?x?xf32>`,
		`%0 = "stablehlo.dynamic_reshape"(%a, %s) : (tensor<?xf32>, tensor<2xi64>) -> tensor<?x?xf32>`},
	{"set_dimension_size", "%a: tensor<4xf32>, %n: tensor<i32>",
		`%0 = stablehlo.set_dimension_size %a, %n, dim = 0 : (tensor<4xf32>, tensor<i32>) -> tensor<?xf32, #stablehlo.bounds<4>>`,
		`%0 = "stablehlo.set_dimension_size"(%a, %n) {dimension = 0 : i64} : (tensor<4xf32>, tensor<i32>) -> tensor<?xf32, #stablehlo.bounds<4>>`},
	{"unary_einsum", "%a: tensor<2x3xf32>",
		`%0 = stablehlo.unary_einsum %a, config = "ab->a" : (tensor<2x3xf32>) -> tensor<2xf32>`,
		`%0 = "stablehlo.unary_einsum"(%a) {einsum_config = "ab->a"} : (tensor<2x3xf32>) -> tensor<2xf32>`},
	{"create_token and partition_id", "",
		`%0 = stablehlo.create_token : !stablehlo.token
		 %1 = stablehlo.partition_id : tensor<ui32>`,
		`%0 = "stablehlo.create_token"() : () -> !stablehlo.token
		 %1 = "stablehlo.partition_id"() : () -> tensor<ui32>`},
	{"bitcast_convert", "%a: tensor<2xf32>",
		`%0 = stablehlo.bitcast_convert %a : (tensor<2xf32>) -> tensor<2xi32>`,
		`%0 = "stablehlo.bitcast_convert"(%a) : (tensor<2xf32>) -> tensor<2xi32>`},
	{"logical ops", "%a: tensor<2xi1>, %b: tensor<2xi1>",
		`%0 = stablehlo.and %a, %b : tensor<2xi1>
		 %1 = stablehlo.not %0 : tensor<2xi1>
		 %2 = stablehlo.popcnt %1 : tensor<2xi1>`,
		`%0 = "stablehlo.and"(%a, %b) : (tensor<2xi1>, tensor<2xi1>) -> tensor<2xi1>
		 %1 = "stablehlo.not"(%0) : (tensor<2xi1>) -> tensor<2xi1>
		 %2 = "stablehlo.popcnt"(%1) : (tensor<2xi1>) -> tensor<2xi1>`},
	{"optimization_barrier empty", "",
		`stablehlo.optimization_barrier()`,
		`"stablehlo.optimization_barrier"() : () -> ()`},
	{"interpreter probe", "%a: tensor<2xf32>",
		`%0 = interpreter.probe %a, probe_id = "p0" : tensor<2xf32>`,
		`%0 = "interpreter.probe"(%a) {probe_id = "p0"} : (tensor<2xf32>) -> tensor<2xf32>`},
	{"check expect_serialized_eq", "%a: tensor<2xf32>",
		`check.expect_serialized_eq %a, probe_id = "p0", iter = 1 : tensor<2xf32>`,
		`"check.expect_serialized_eq"(%a) {iteration = 1 : ui32, probe_id = "p0"} : (tensor<2xf32>) -> ()`},
	{"chlo broadcast_select", "%p: tensor<2xi1>, %a: tensor<2xf32>, %b: tensor<2xf32>",
		`%0 = chlo.broadcast_select %p, %a, %b : (tensor<2xi1>, tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>`,
		`%0 = "chlo.broadcast_select"(%p, %a, %b) : (tensor<2xi1>, tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>`},
	{"chlo constant", "",
		`%0 = chlo.constant dense<1.0> : tensor<f32>`,
		`%0 = "chlo.constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>`},
	{"sdy reshard", "%a: tensor<8xf32>",
		`%0 = sdy.reshard %a <@mesh, [{"a"}]> : tensor<8xf32>`,
		`%0 = "sdy.reshard"(%a) {sharding = #sdy.sharding<@mesh, [{"a"}]>} : (tensor<8xf32>) -> tensor<8xf32>`},
	{"call and return", "%a: tensor<f32>",
		`%0 = call @g(%a) : (tensor<f32>) -> tensor<f32>
		 return %0 : tensor<f32>`,
		`%0 = "func.call"(%a) <{callee = @g}> : (tensor<f32>) -> tensor<f32>
		 "func.return"(%0) : (tensor<f32>) -> ()`},
	{"chlo unary", "%a: tensor<2xf32>",
		`%0 = chlo.erf_inv %a : tensor<2xf32> -> tensor<2xf32>`,
		`%0 = "chlo.erf_inv"(%a) : (tensor<2xf32>) -> tensor<2xf32>`},
	{"chlo top_k", "%a: tensor<4xf32>",
		`%0, %1 = chlo.top_k(%a, k = 2) : tensor<4xf32> -> (tensor<2xf32>, tensor<2xi32>)`,
		`%0:2 = "chlo.top_k"(%a) {k = 2 : i64} : (tensor<4xf32>) -> (tensor<2xf32>, tensor<2xi32>)`},
	{"chlo broadcast_add", "%a: tensor<2x3xf32>, %b: tensor<3xf32>",
		`%0 = chlo.broadcast_add %a, %b {broadcast_dimensions = array<i64: 1>} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>`,
		`%0 = "chlo.broadcast_add"(%a, %b) {broadcast_dimensions = array<i64: 1>} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>`},
	{"chlo next_after", "%a: tensor<2xf32>, %b: tensor<2xf32>",
		`%0 = chlo.next_after %a, %b : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>`,
		`%0 = "chlo.next_after"(%a, %b) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>`},
	{"chlo broadcast_compare", "%a: tensor<2xf32>, %b: tensor<2xf32>",
		`%0 = chlo.broadcast_compare %a, %b {comparison_direction = #chlo<comparison_direction LT>} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>`,
		`%0 = "chlo.broadcast_compare"(%a, %b) {comparison_direction = #chlo<comparison_direction LT>} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>`},
	{"chlo scan", "%x: tensor<4xi32>, %z: tensor<i32>",
		`%0:2 = chlo.scan(%x) inits(%z) dimension=0 {
		 ^bb0(%a: tensor<i32>, %c: tensor<i32>):
		   %1 = stablehlo.add %a, %c : tensor<i32>
		   stablehlo.return %1, %1 : tensor<i32>, tensor<i32>
		 } : (tensor<4xi32>, tensor<i32>) -> (tensor<4xi32>, tensor<i32>)`,
		`%0:2 = "chlo.scan"(%x, %z) <{dimension = 0 : i64, operandSegmentSizes = array<i32: 1, 1>, resultSegmentSizes = array<i32: 1, 1>}> ({
		 ^bb0(%a: tensor<i32>, %c: tensor<i32>):
		   %1 = "stablehlo.add"(%a, %c) : (tensor<i32>, tensor<i32>) -> tensor<i32>
		   "stablehlo.return"(%1, %1) : (tensor<i32>, tensor<i32>) -> ()
		 }) : (tensor<4xi32>, tensor<i32>) -> (tensor<4xi32>, tensor<i32>)`},
	{"arith constant", "",
		`%0 = arith.constant dense<1> : tensor<i32>
		 %1 = arith.constant 2.5 : f32`,
		`%0 = "arith.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
		 %1 = "arith.constant"() <{value = 2.5 : f32}> : () -> f32`},
	{"check expect_eq_const", "%a: tensor<2xi2>",
		`check.expect_eq_const %a, dense<[1, -2]> : tensor<2xi2>`,
		`"check.expect_eq_const"(%a) {value = dense<[1, -2]> : tensor<2xi2>} : (tensor<2xi2>) -> ()`},
	{"check expect_almost_eq_const", "%a: tensor<2xf32>",
		`check.expect_almost_eq_const %a, dense<[1.0, 2.5]> : tensor<2xf32>, tolerance = 1.000000e-01`,
		`"check.expect_almost_eq_const"(%a) {tolerance = 1.000000e-01 : f64, value = dense<[1.0, 2.5]> : tensor<2xf32>} : (tensor<2xf32>) -> ()`},
	{"check expect_eq", "%a: tensor<2xf32>, %b: tensor<2xf32>",
		`check.expect_eq %a, %b : tensor<2xf32>`,
		`"check.expect_eq"(%a, %b) : (tensor<2xf32>, tensor<2xf32>) -> ()`},
	{"check expect_almost_eq", "%a: tensor<2xf32>, %b: tensor<2xf32>",
		`check.expect_almost_eq %a, %b, tolerance = 0.1 : tensor<2xf32>`,
		`"check.expect_almost_eq"(%a, %b) {tolerance = 1.000000e-01 : f64} : (tensor<2xf32>, tensor<2xf32>) -> ()`},
	{"sdy mesh and sharding_constraint", "%a: tensor<8x8xf32>",
		`%0 = sdy.sharding_constraint %a <@mesh, [{"a"}, {}]> : tensor<8x8xf32>`,
		`%0 = "sdy.sharding_constraint"(%a) <{sharding = #sdy.sharding<@mesh, [{"a"}, {}]>}> : (tensor<8x8xf32>) -> tensor<8x8xf32>`},
	{"sdy manual_computation", "%a: tensor<16x32xf32>",
		`%0 = sdy.manual_computation(%a) in_shardings=[<@mesh, [{"a", ?}, {?}]>] out_shardings=[<@mesh, [{"a", ?}, {?}]>] manual_axes={"a"} (%b: tensor<8x32xf32>) {
		   %1 = stablehlo.add %b, %b : tensor<8x32xf32>
		   sdy.return %1 : tensor<8x32xf32>
		 } : (tensor<16x32xf32>) -> tensor<16x32xf32>`,
		`%0 = "sdy.manual_computation"(%a) <{in_shardings = #sdy.sharding_per_value<[<@mesh, [{"a", ?}, {?}]>]>, manual_axes = #sdy<manual_axes{"a"}>, out_shardings = #sdy.sharding_per_value<[<@mesh, [{"a", ?}, {?}]>]>}> ({
		 ^bb0(%b: tensor<8x32xf32>):
		   %1 = "stablehlo.add"(%b, %b) : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32>
		   "sdy.return"(%1) : (tensor<8x32xf32>) -> ()
		 }) : (tensor<16x32xf32>) -> tensor<16x32xf32>`},
	{"check expect_close", "%a: tensor<2xf32>, %b: tensor<2xf32>",
		`check.expect_close %a, %b, max_ulp_difference = 3 : tensor<2xf32>, tensor<2xf32>`,
		`"check.expect_close"(%a, %b) {max_ulp_difference = 3 : ui64} : (tensor<2xf32>, tensor<2xf32>) -> ()`},
}

func TestPrettyEqualsGeneric(t *testing.T) {
	for _, c := range prettyPairs {
		t.Run(c.name, func(t *testing.T) {
			wrap := func(body string) string {
				return "func.func @f(" + c.args + ") {\n" + body + "\n}\n"
			}
			pm, err := Parse("pretty.mlir", []byte(wrap(c.pretty)))
			if err != nil {
				t.Fatalf("pretty: %v", err)
			}
			gm, err := Parse("generic.mlir", []byte(wrap(c.generic)))
			if err != nil {
				t.Fatalf("generic: %v", err)
			}
			canon(pm)
			canon(gm)
			if !reflect.DeepEqual(pm, gm) {
				t.Errorf("pretty and generic differ:\npretty:  %s\ngeneric: %s", dump(pm), dump(gm))
			}
		})
	}
}

// canon clears what legitimately differs between two spellings of the same
// IR (positions, block labels, value names) by naming values in definition
// order.
func canon(m *Module) {
	m.Pos = Pos{}
	n := 0
	var ops func([]*Op)
	ops = func(list []*Op) {
		for _, op := range list {
			op.Pos = Pos{}
			for _, r := range op.Regions {
				for _, b := range r.Blocks {
					b.Label = ""
					for _, a := range b.Args {
						a.Name = fmt.Sprintf("v%d", n)
						n++
					}
					ops(b.Ops)
				}
			}
			for _, v := range op.Results {
				v.Name = fmt.Sprintf("v%d", n)
				n++
			}
		}
	}
	ops(m.Ops)
}

// dump prints a module's ops for a failure message.
func dump(m *Module) string {
	var sb strings.Builder
	var ops func([]*Op, string)
	ops = func(list []*Op, indent string) {
		for _, op := range list {
			fmt.Fprintf(&sb, "\n%s%s operands=", indent, op.Name)
			for _, v := range op.Operands {
				fmt.Fprintf(&sb, "%s ", v.Name)
			}
			fmt.Fprintf(&sb, "results=")
			for _, v := range op.Results {
				fmt.Fprintf(&sb, "%s:%#v ", v.Name, v.Type)
			}
			fmt.Fprintf(&sb, "attrs=%#v", op.Attrs)
			for _, r := range op.Regions {
				for _, b := range r.Blocks {
					fmt.Fprintf(&sb, "\n%s block args=", indent)
					for _, a := range b.Args {
						fmt.Fprintf(&sb, "%s:%#v ", a.Name, a.Type)
					}
					ops(b.Ops, indent+"  ")
				}
			}
		}
	}
	ops(m.Ops, "")
	return sb.String()
}
