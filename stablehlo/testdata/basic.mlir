// RUN: stablehlo-translate --interpret -split-input-file %s
// Hand-worked expectations: each program checks its own results.

func.func @add_sub() {
  %0 = "stablehlo.constant"() {value = dense<[1.5, -2.0, 3.0]> : tensor<3xf32>} : () -> tensor<3xf32>
  %1 = "stablehlo.constant"() {value = dense<[0.5, 4.0, -1.0]> : tensor<3xf32>} : () -> tensor<3xf32>
  %2 = "stablehlo.add"(%0, %1) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %3 = "stablehlo.subtract"(%2, %1) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  "check.expect_eq_const"(%2) {value = dense<[2.0, 2.0, 2.0]> : tensor<3xf32>} : (tensor<3xf32>) -> ()
  "check.expect_almost_eq"(%3, %0) : (tensor<3xf32>, tensor<3xf32>) -> ()
  func.return
}

// -----

func.func @reduce_sum_rows() {
  %0 = "stablehlo.constant"() {value = dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi32>} : () -> tensor<2x3xi32>
  %1 = "stablehlo.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  %2 = "stablehlo.reduce"(%0, %1) ({
  ^bb0(%a: tensor<i32>, %b: tensor<i32>):
    %s = "stablehlo.add"(%a, %b) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    "stablehlo.return"(%s) : (tensor<i32>) -> ()
  }) {dimensions = array<i64: 1>} : (tensor<2x3xi32>, tensor<i32>) -> tensor<2xi32>
  "check.expect_eq_const"(%2) {value = dense<[6, 15]> : tensor<2xi32>} : (tensor<2xi32>) -> ()
  func.return
}

// -----

func.func @while_captures() {
  %limit = "stablehlo.constant"() {value = dense<5> : tensor<i64>} : () -> tensor<i64>
  %step = "stablehlo.constant"() {value = dense<[1, 2]> : tensor<2xi64>} : () -> tensor<2xi64>
  %inc = "stablehlo.add"(%step, %step) : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
  %zero = "stablehlo.constant"() {value = dense<0> : tensor<i64>} : () -> tensor<i64>
  %acc0 = "stablehlo.constant"() {value = dense<0> : tensor<2xi64>} : () -> tensor<2xi64>
  %r:2 = "stablehlo.while"(%zero, %acc0) ({
  ^bb0(%i: tensor<i64>, %acc: tensor<2xi64>):
    %c = "stablehlo.compare"(%i, %limit) {comparison_direction = #stablehlo<comparison_direction LT>} : (tensor<i64>, tensor<i64>) -> tensor<i1>
    "stablehlo.return"(%c) : (tensor<i1>) -> ()
  }, {
  ^bb0(%i: tensor<i64>, %acc: tensor<2xi64>):
    %one = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %i1 = "stablehlo.add"(%i, %one) : (tensor<i64>, tensor<i64>) -> tensor<i64>
    %a1 = "stablehlo.add"(%acc, %inc) : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
    "stablehlo.return"(%i1, %a1) : (tensor<i64>, tensor<2xi64>) -> ()
  }) : (tensor<i64>, tensor<2xi64>) -> (tensor<i64>, tensor<2xi64>)
  "check.expect_eq_const"(%r#0) {value = dense<5> : tensor<i64>} : (tensor<i64>) -> ()
  "check.expect_eq_const"(%r#1) {value = dense<[10, 20]> : tensor<2xi64>} : (tensor<2xi64>) -> ()
  func.return
}

// -----

func.func @if_captures() {
  %p = "stablehlo.constant"() {value = dense<false> : tensor<i1>} : () -> tensor<i1>
  %x = "stablehlo.constant"() {value = dense<[1.0, 2.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %y = "stablehlo.negate"(%x) : (tensor<2xf32>) -> tensor<2xf32>
  %r = "stablehlo.if"(%p) ({
    "stablehlo.return"(%x) : (tensor<2xf32>) -> ()
  }, {
    "stablehlo.return"(%y) : (tensor<2xf32>) -> ()
  }) : (tensor<i1>) -> tensor<2xf32>
  "check.expect_eq_const"(%r) {value = dense<[-1.0, -2.0]> : tensor<2xf32>} : (tensor<2xf32>) -> ()
  func.return
}

// -----

func.func @hex_and_complex() {
  %0 = "stablehlo.constant"() {value = dense<"0x0000803F00000040"> : tensor<2xf32>} : () -> tensor<2xf32>
  %1 = "stablehlo.constant"() {value = dense<[(1.0, 2.0), (3.0, -4.0)]> : tensor<2xcomplex<f32>>} : () -> tensor<2xcomplex<f32>>
  %2 = "stablehlo.real"(%1) : (tensor<2xcomplex<f32>>) -> tensor<2xf32>
  %3 = "stablehlo.imag"(%1) : (tensor<2xcomplex<f32>>) -> tensor<2xf32>
  "check.expect_eq_const"(%0) {value = dense<[1.0, 2.0]> : tensor<2xf32>} : (tensor<2xf32>) -> ()
  "check.expect_eq_const"(%2) {value = dense<[1.0, 3.0]> : tensor<2xf32>} : (tensor<2xf32>) -> ()
  "check.expect_eq_const"(%3) {value = dense<[2.0, -4.0]> : tensor<2xf32>} : (tensor<2xf32>) -> ()
  func.return
}

// -----

func.func @deprecated_broadcast() {
  %x = "stablehlo.constant"() {value = dense<[1, 2]> : tensor<2xi32>} : () -> tensor<2xi32>
  %b = "stablehlo.broadcast"(%x) {broadcast_sizes = array<i64: 3>} : (tensor<2xi32>) -> tensor<3x2xi32>
  "check.expect_eq_const"(%b) {value = dense<[[1, 2], [1, 2], [1, 2]]> : tensor<3x2xi32>} : (tensor<3x2xi32>) -> ()
  %t = "stablehlo.create_token"() : () -> !stablehlo.token
  func.return
}

// -----

func.func @sharding_annotations() {
  %x = "stablehlo.constant"() {value = dense<[1.0, 2.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %y = "sdy.sharding_constraint"(%x) {sharding = #sdy.sharding<@mesh, [{}]>} : (tensor<2xf32>) -> tensor<2xf32>
  %z = "stablehlo.custom_call"(%y) {call_target_name = "Sharding", mhlo.sharding = "{replicated}"} : (tensor<2xf32>) -> tensor<2xf32>
  "check.expect_eq_const"(%z) {value = dense<[1.0, 2.0]> : tensor<2xf32>} : (tensor<2xf32>) -> ()
  func.return
}

// -----

func.func @arith_constants() {
  %a = arith.constant 3 : i32
  %b = arith.constant dense<[1.5, -2.0]> : tensor<2xf32>
  %c = arith.constant 2.5 : f32
  "check.expect_eq_const"(%a) {value = dense<3> : tensor<i32>} : (tensor<i32>) -> ()
  "check.expect_eq_const"(%b) {value = dense<[1.5, -2.0]> : tensor<2xf32>} : (tensor<2xf32>) -> ()
  "check.expect_eq_const"(%c) {value = dense<2.5> : tensor<f32>} : (tensor<f32>) -> ()
  func.return
}

// -----

// batch_norm_inference: scale * (x - mean) / sqrt(variance + epsilon) + offset
// per feature (column); batch_norm_training also returns the batch mean
// [2, 3] and variance [1, 1].
func.func @batch_norm() {
  %x = "stablehlo.constant"() {value = dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>} : () -> tensor<2x2xf32>
  %scale = "stablehlo.constant"() {value = dense<[1.0, 2.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %offset = "stablehlo.constant"() {value = dense<[0.0, 1.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %mean = "stablehlo.constant"() {value = dense<[2.0, 3.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %var = "stablehlo.constant"() {value = dense<[1.0, 4.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %y = "stablehlo.batch_norm_inference"(%x, %scale, %offset, %mean, %var) {epsilon = 0.0 : f32, feature_index = 1 : i64} : (tensor<2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<2x2xf32>
  "check.expect_almost_eq_const"(%y) {value = dense<[[-1.0, 0.0], [1.0, 2.0]]> : tensor<2x2xf32>} : (tensor<2x2xf32>) -> ()
  %one = "stablehlo.constant"() {value = dense<1.0> : tensor<2xf32>} : () -> tensor<2xf32>
  %zero = "stablehlo.constant"() {value = dense<0.0> : tensor<2xf32>} : () -> tensor<2xf32>
  %t:3 = "stablehlo.batch_norm_training"(%x, %one, %zero) {epsilon = 0.0 : f32, feature_index = 1 : i64} : (tensor<2x2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<2x2xf32>, tensor<2xf32>, tensor<2xf32>)
  "check.expect_almost_eq_const"(%t#0) {value = dense<[[-1.0, -1.0], [1.0, 1.0]]> : tensor<2x2xf32>} : (tensor<2x2xf32>) -> ()
  "check.expect_almost_eq_const"(%t#1) {value = dense<[2.0, 3.0]> : tensor<2xf32>} : (tensor<2xf32>) -> ()
  "check.expect_almost_eq_const"(%t#2) {value = dense<[1.0, 1.0]> : tensor<2xf32>} : (tensor<2xf32>) -> ()
  func.return
}

// -----

// cholesky([[4, 2], [2, 2]]) = [[2, 0], [1, 1]] (lower; the other
// triangle is unspecified and masked); dot([[1, 2]], [[3], [4]]) = [[11]].
func.func @cholesky_and_dot() {
  %a = "stablehlo.constant"() {value = dense<[[4.0, 2.0], [2.0, 2.0]]> : tensor<2x2xf32>} : () -> tensor<2x2xf32>
  %l = "stablehlo.cholesky"(%a) {lower = true} : (tensor<2x2xf32>) -> tensor<2x2xf32>
  %i = "stablehlo.iota"() {iota_dimension = 0 : i64} : () -> tensor<2x2xi32>
  %j = "stablehlo.iota"() {iota_dimension = 1 : i64} : () -> tensor<2x2xi32>
  %m = "stablehlo.compare"(%i, %j) {comparison_direction = #stablehlo<comparison_direction GE>} : (tensor<2x2xi32>, tensor<2x2xi32>) -> tensor<2x2xi1>
  %z = "stablehlo.constant"() {value = dense<0.0> : tensor<2x2xf32>} : () -> tensor<2x2xf32>
  %lm = "stablehlo.select"(%m, %l, %z) : (tensor<2x2xi1>, tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  "check.expect_almost_eq_const"(%lm) {value = dense<[[2.0, 0.0], [1.0, 1.0]]> : tensor<2x2xf32>} : (tensor<2x2xf32>) -> ()
  %p = "stablehlo.constant"() {value = dense<[[1.0, 2.0]]> : tensor<1x2xf32>} : () -> tensor<1x2xf32>
  %q = "stablehlo.constant"() {value = dense<[[3.0], [4.0]]> : tensor<2x1xf32>} : () -> tensor<2x1xf32>
  %d = "stablehlo.dot"(%p, %q) : (tensor<1x2xf32>, tensor<2x1xf32>) -> tensor<1x1xf32>
  "check.expect_eq_const"(%d) {value = dense<[[11.0]]> : tensor<1x1xf32>} : (tensor<1x1xf32>) -> ()
  func.return
}
