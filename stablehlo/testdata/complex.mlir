// RUN: stablehlo-translate --interpret -split-input-file %s
// Hand-worked expectations for the complex ops HLO lacks or restricts.

// cbrt(z) = |z|^(1/3)·e^(i·arg(z)/3) (the spec's principal root):
// -8 → 2·e^(iπ/3) = 1 + i√3; 8i → 2·e^(iπ/6) = √3 + i; -27 → 3·e^(iπ/3).
func.func @cbrt_complex() {
  %0 = stablehlo.constant dense<[(-8.0, 0.0), (0.0, 8.0)]> : tensor<2xcomplex<f64>>
  %1 = stablehlo.cbrt %0 : tensor<2xcomplex<f64>>
  check.expect_almost_eq_const %1, dense<[(1.0, 1.7320508075688772), (1.7320508075688772, 1.0)]> : tensor<2xcomplex<f64>>
  %2 = stablehlo.constant dense<(-27.0, 0.0)> : tensor<complex<f32>>
  %3 = stablehlo.cbrt %2 : tensor<complex<f32>>
  check.expect_almost_eq_const %3, dense<(1.5, 2.598076211353316)> : tensor<complex<f32>>
  func.return
}

// -----

// atan2(y, x) = -i·log((x + iy)/sqrt(x² + y²)): y = x = 1 gives
// -i·log(e^(iπ/4)) = π/4; y = i, x = 2 gives x + iy = 1 over √3, so
// -i·log(1/√3) = i·ln√3 (= atan(i/2) = i·atanh(1/2)).
func.func @atan2_complex() {
  %y = stablehlo.constant dense<[(1.0, 0.0), (0.0, 1.0)]> : tensor<2xcomplex<f64>>
  %x = stablehlo.constant dense<[(1.0, 0.0), (2.0, 0.0)]> : tensor<2xcomplex<f64>>
  %0 = stablehlo.atan2 %y, %x : tensor<2xcomplex<f64>>
  check.expect_almost_eq_const %0, dense<[(0.7853981633974483, 0.0), (0.0, 0.5493061443340549)]> : tensor<2xcomplex<f64>>
  func.return
}

// -----

// A complex element is its real part's little-endian bytes, then its
// imaginary part's: c128 (1.0, 2.0000000000000004) has the words
// 0x3FF00000_00000000 and 0x40000000_00000001, low halves first.
func.func @bitcast_complex() {
  %0 = stablehlo.constant dense<(0x3FF0000000000000, 0x4000000000000001)> : tensor<complex<f64>>
  %1 = stablehlo.bitcast_convert %0 : (tensor<complex<f64>>) -> tensor<2xcomplex<f32>>
  check.expect_eq_const %1, dense<[(0x00000000, 0x3FF00000), (0x00000001, 0x40000000)]> : tensor<2xcomplex<f32>>
  %2 = stablehlo.bitcast_convert %1 : (tensor<2xcomplex<f32>>) -> tensor<complex<f64>>
  check.expect_eq %2, %0 : tensor<complex<f64>>
  func.return
}

// -----

// Between complex and real types: c64 (1, -2) is the words 0x3F800000
// (1.0f) then 0xC0000000 (-2.0f); as one u64 the first is the low half,
// 0xC00000003F800000; as u16 pieces, low first: 0, 0x3F80, 0, 0xC000.
func.func @bitcast_complex_real() {
  %0 = stablehlo.constant dense<(1.0, -2.0)> : tensor<complex<f32>>
  %1 = stablehlo.bitcast_convert %0 : (tensor<complex<f32>>) -> tensor<ui64>
  check.expect_eq_const %1, dense<13835058056347516928> : tensor<ui64>
  %2 = stablehlo.bitcast_convert %0 : (tensor<complex<f32>>) -> tensor<2xf32>
  check.expect_eq_const %2, dense<[1.0, -2.0]> : tensor<2xf32>
  %3 = stablehlo.bitcast_convert %0 : (tensor<complex<f32>>) -> tensor<4xui16>
  check.expect_eq_const %3, dense<[0, 16256, 0, 49152]> : tensor<4xui16>
  %4 = stablehlo.bitcast_convert %1 : (tensor<ui64>) -> tensor<complex<f32>>
  check.expect_eq %4, %0 : tensor<complex<f32>>
  %5 = stablehlo.bitcast_convert %2 : (tensor<2xf32>) -> tensor<complex<f32>>
  check.expect_eq %5, %0 : tensor<complex<f32>>
  %6 = stablehlo.bitcast_convert %3 : (tensor<4xui16>) -> tensor<complex<f32>>
  check.expect_eq %6, %0 : tensor<complex<f32>>
  func.return
}
