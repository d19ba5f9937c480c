// RUN: stablehlo-translate --interpret -split-input-file %s
// CHLO ops against hand-worked values (special functions from tables:
// lgamma(3) = ln 2, lgamma(0.5) = ln sqrt(pi), digamma(1) = -γ,
// erf_inv(0.5) = 0.4769362762, erfc(1) = 0.1572992071, erfc(3) = 2.209049700e-5,
// bessel_i1e(1) = e^-1 I1(1) = 0.2079104154).

func.func @special() {
  %x = stablehlo.constant dense<[1.0, 3.0, 0.5]> : tensor<3xf32>
  %lg = chlo.lgamma %x : tensor<3xf32> -> tensor<3xf32>
  check.expect_almost_eq_const %lg, dense<[0.0, 0.693147181, 0.572364943]> : tensor<3xf32>
  %one = stablehlo.constant dense<1.0> : tensor<f64>
  %dg = chlo.digamma %one : tensor<f64> -> tensor<f64>
  check.expect_almost_eq_const %dg, dense<-0.5772156649> : tensor<f64>
  %h = stablehlo.constant dense<[0.0, 0.5]> : tensor<2xf32>
  %ei = chlo.erf_inv %h : tensor<2xf32> -> tensor<2xf32>
  check.expect_almost_eq_const %ei, dense<[0.0, 0.476936276]> : tensor<2xf32>
  %e = stablehlo.constant dense<[0.0, 1.0, 3.0]> : tensor<3xf64>
  %ec = chlo.erfc %e : tensor<3xf64> -> tensor<3xf64>
  "check.expect_almost_eq_const"(%ec) {value = dense<[1.0, 0.1572992071, 2.209049700e-5]> : tensor<3xf64>, tolerance = 1.0e-9 : f64} : (tensor<3xf64>) -> ()
  %b = chlo.bessel_i1e %e : tensor<3xf64> -> tensor<3xf64>
  check.expect_almost_eq_const %b, dense<[0.0, 0.2079104154, 0.1968267133]> : tensor<3xf64>
  func.return
}

// -----

func.func @bits_and_predicates() {
  %x = stablehlo.constant dense<[1.0, 0.0]> : tensor<2xf32>
  %y = stablehlo.constant dense<[2.0, -1.0]> : tensor<2xf32>
  %n = chlo.next_after %x, %y : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
  check.expect_eq_const %n, dense<[0x3F800001, 0x80000001]> : tensor<2xf32>
  %v = stablehlo.constant dense<[0x7F800000, 0xFF800000, 1.0, 0x7FC00000]> : tensor<4xf32>
  %i = chlo.is_inf %v : tensor<4xf32> -> tensor<4xi1>
  check.expect_eq_const %i, dense<[true, true, false, false]> : tensor<4xi1>
  %p = chlo.is_pos_inf %v : tensor<4xf32> -> tensor<4xi1>
  check.expect_eq_const %p, dense<[true, false, false, false]> : tensor<4xi1>
  func.return
}

// -----

func.func @top_k_conj_broadcast() {
  %x = stablehlo.constant dense<[1, 5, 3, 4]> : tensor<4xi32>
  %v, %i = chlo.top_k(%x, k = 2) : tensor<4xi32> -> (tensor<2xi32>, tensor<2xi32>)
  check.expect_eq_const %v, dense<[5, 4]> : tensor<2xi32>
  check.expect_eq_const %i, dense<[1, 3]> : tensor<2xi32>
  %c = stablehlo.constant dense<[(1.0, 2.0)]> : tensor<1xcomplex<f32>>
  %cc = chlo.conj %c : tensor<1xcomplex<f32>> -> tensor<1xcomplex<f32>>
  check.expect_eq_const %cc, dense<[(1.0, -2.0)]> : tensor<1xcomplex<f32>>
  %a = stablehlo.constant dense<[1, 2]> : tensor<2xi32>
  %b = stablehlo.constant dense<[[10], [20]]> : tensor<2x1xi32>
  %s = chlo.broadcast_add %a, %b : (tensor<2xi32>, tensor<2x1xi32>) -> tensor<2x2xi32>
  check.expect_eq_const %s, dense<[[11, 12], [21, 22]]> : tensor<2x2xi32>
  func.return
}

// -----

func.func @stretch_and_complex() {
  %x = stablehlo.constant dense<[[1], [2]]> : tensor<2x1xi32>
  %b = stablehlo.broadcast_in_dim %x, dims = [0, 1] : (tensor<2x1xi32>) -> tensor<2x3xi32>
  check.expect_eq_const %b, dense<[[1, 1, 1], [2, 2, 2]]> : tensor<2x3xi32>
  %p = stablehlo.constant dense<[(1.0, 5.0), (2.0, 0.0)]> : tensor<2xcomplex<f32>>
  %q = stablehlo.constant dense<[(1.0, 6.0), (1.0, 9.0)]> : tensor<2xcomplex<f32>>
  %m = stablehlo.maximum %p, %q : tensor<2xcomplex<f32>>
  check.expect_eq_const %m, dense<[(1.0, 6.0), (2.0, 0.0)]> : tensor<2xcomplex<f32>>
  %r = stablehlo.convert %p : (tensor<2xcomplex<f32>>) -> tensor<2xf32>
  check.expect_eq_const %r, dense<[1.0, 2.0]> : tensor<2xf32>
  func.return
}

// -----

// erf(0.5) = 0.5204998778, erf(1) = 0.8427007929, erf(5) = 1 in f32.
func.func @erf_f32() {
  %x = stablehlo.constant dense<[0.0, 0.5, 1.0, -5.0]> : tensor<4xf32>
  %e = chlo.erf %x : tensor<4xf32> -> tensor<4xf32>
  "check.expect_almost_eq_const"(%e) {value = dense<[0.0, 0.5204998778, 0.8427007929, -1.0]> : tensor<4xf32>, tolerance = 1.0e-6 : f64} : (tensor<4xf32>) -> ()
  func.return
}

// -----

// ζ(2, 1) = π²/6 = 1.644934067, ζ(3, 2) = ζ(3) - 1 = 0.2020569032,
// ψ⁽¹⁾(1) = π²/6, ψ⁽⁰⁾(1) = -γ = -0.5772156649.
func.func @zeta_polygamma() {
  %x = stablehlo.constant dense<[2.0, 3.0]> : tensor<2xf64>
  %q = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf64>
  %z = chlo.zeta %x, %q : tensor<2xf64>, tensor<2xf64> -> tensor<2xf64>
  "check.expect_almost_eq_const"(%z) {value = dense<[1.644934067, 0.2020569032]> : tensor<2xf64>, tolerance = 1.0e-9 : f64} : (tensor<2xf64>) -> ()
  %n = stablehlo.constant dense<[1.0, 0.0]> : tensor<2xf64>
  %one = stablehlo.constant dense<[1.0, 1.0]> : tensor<2xf64>
  %p = chlo.polygamma %n, %one : tensor<2xf64>, tensor<2xf64> -> tensor<2xf64>
  "check.expect_almost_eq_const"(%p) {value = dense<[1.644934067, -0.5772156649]> : tensor<2xf64>, tolerance = 1.0e-8 : f64} : (tensor<2xf64>) -> ()
  func.return
}

// -----

// acos(0.5) = π/3, asinh(0.5i) = i asin(0.5) = i π/6, acosh(2) = ln(2 + √3).
func.func @complex_inverse() {
  %a = stablehlo.constant dense<[(0.5, 0.0)]> : tensor<1xcomplex<f64>>
  %r = chlo.acos %a : tensor<1xcomplex<f64>> -> tensor<1xcomplex<f64>>
  check.expect_almost_eq_const %r, dense<[(1.0471975511965979, 0.0)]> : tensor<1xcomplex<f64>>
  %b = stablehlo.constant dense<[(0.0, 0.5)]> : tensor<1xcomplex<f64>>
  %h = chlo.asinh %b : tensor<1xcomplex<f64>> -> tensor<1xcomplex<f64>>
  check.expect_almost_eq_const %h, dense<[(0.0, 0.5235987755982989)]> : tensor<1xcomplex<f64>>
  %c = stablehlo.constant dense<[(2.0, 0.0)]> : tensor<1xcomplex<f32>>
  %k = chlo.acosh %c : tensor<1xcomplex<f32>> -> tensor<1xcomplex<f32>>
  check.expect_almost_eq_const %k, dense<[(1.3169579, 0.0)]> : tensor<1xcomplex<f32>>
  func.return
}
