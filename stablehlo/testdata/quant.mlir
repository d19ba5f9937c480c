// RUN: stablehlo-translate --interpret -split-input-file %s
// Hand-worked quantization: q = clamp(round(x / scale + zero_point)).

func.func @per_tensor() {
  %x = stablehlo.constant dense<[0.5, -1.0, 2.0, 100.0]> : tensor<4xf32>
  %q = stablehlo.uniform_quantize %x : (tensor<4xf32>) -> tensor<4x!quant.uniform<i8:f32, 0.5:3>>
  %s = stablehlo.bitcast_convert %q : (tensor<4x!quant.uniform<i8:f32, 0.5:3>>) -> tensor<4xi8>
  check.expect_eq_const %s, dense<[4, 1, 7, 127]> : tensor<4xi8>
  %d = stablehlo.uniform_dequantize %q : (tensor<4x!quant.uniform<i8:f32, 0.5:3>>) -> tensor<4xf32>
  check.expect_eq_const %d, dense<[0.5, -1.0, 2.0, 62.0]> : tensor<4xf32>
  func.return
}

// -----

func.func @per_axis() {
  %x = stablehlo.constant dense<1.0> : tensor<2x2xf32>
  %q = stablehlo.uniform_quantize %x : (tensor<2x2xf32>) -> tensor<2x2x!quant.uniform<i8:f32:0, {0.5:0, 0.25:1}>>
  %s = stablehlo.bitcast_convert %q : (tensor<2x2x!quant.uniform<i8:f32:0, {0.5:0, 0.25:1}>>) -> tensor<2x2xi8>
  check.expect_eq_const %s, dense<[[2, 2], [5, 5]]> : tensor<2x2xi8>
  func.return
}

// -----

func.func @add_requantizes() {
  %a = stablehlo.constant dense<[2, 4]> : tensor<2xi8>
  %b = stablehlo.constant dense<[2, 2]> : tensor<2xi8>
  %qa = stablehlo.bitcast_convert %a : (tensor<2xi8>) -> tensor<2x!quant.uniform<i8:f32, 0.5>>
  %qb = stablehlo.bitcast_convert %b : (tensor<2xi8>) -> tensor<2x!quant.uniform<i8:f32, 0.5>>
  %r = stablehlo.add %qa, %qb : (tensor<2x!quant.uniform<i8:f32, 0.5>>, tensor<2x!quant.uniform<i8:f32, 0.5>>) -> tensor<2x!quant.uniform<i8:f32, 1.0>>
  %s = stablehlo.bitcast_convert %r : (tensor<2x!quant.uniform<i8:f32, 1.0>>) -> tensor<2xi8>
  check.expect_eq_const %s, dense<[2, 3]> : tensor<2xi8>
  func.return
}
