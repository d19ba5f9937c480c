module @jit_predict attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<16x32xf32> {mhlo.layout_mode = "default"}, %arg1: tensor<32xf32> {mhlo.layout_mode = "default"}, %arg2: tensor<32x10xf32> {mhlo.layout_mode = "default"}, %arg3: tensor<10xf32> {mhlo.layout_mode = "default"}, %arg4: tensor<8x16xf32> {mhlo.layout_mode = "default"}) -> (tensor<8x10xf32> {jax.result_info = "", mhlo.layout_mode = "default"}) {
    %0 = stablehlo.dot_general %arg4, %arg0, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
    %1 = stablehlo.broadcast_in_dim %arg1, dims = [1] : (tensor<32xf32>) -> tensor<1x32xf32>
    %2 = stablehlo.broadcast_in_dim %1, dims = [0, 1] : (tensor<1x32xf32>) -> tensor<8x32xf32>
    %3 = stablehlo.add %0, %2 : tensor<8x32xf32>
    %4 = call @relu(%3) : (tensor<8x32xf32>) -> tensor<8x32xf32>
    %5 = stablehlo.dot_general %4, %arg2, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x32xf32>, tensor<32x10xf32>) -> tensor<8x10xf32>
    %6 = stablehlo.broadcast_in_dim %arg3, dims = [1] : (tensor<10xf32>) -> tensor<1x10xf32>
    %7 = stablehlo.broadcast_in_dim %6, dims = [0, 1] : (tensor<1x10xf32>) -> tensor<8x10xf32>
    %8 = stablehlo.add %5, %7 : tensor<8x10xf32>
    %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %9 = stablehlo.reduce(%8 init: %cst) applies stablehlo.maximum across dimensions = [1] : (tensor<8x10xf32>, tensor<f32>) -> tensor<8xf32>
    %10 = stablehlo.broadcast_in_dim %9, dims = [0] : (tensor<8xf32>) -> tensor<8x1xf32>
    %11 = stablehlo.broadcast_in_dim %10, dims = [0, 1] : (tensor<8x1xf32>) -> tensor<8x10xf32>
    %12 = stablehlo.subtract %8, %11 : tensor<8x10xf32>
    %13 = stablehlo.exponential %12 : tensor<8x10xf32>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %14 = stablehlo.reduce(%13 init: %cst_0) applies stablehlo.add across dimensions = [1] : (tensor<8x10xf32>, tensor<f32>) -> tensor<8xf32>
    %15 = stablehlo.broadcast_in_dim %14, dims = [0] : (tensor<8xf32>) -> tensor<8x1xf32>
    %16 = stablehlo.broadcast_in_dim %15, dims = [0, 1] : (tensor<8x1xf32>) -> tensor<8x10xf32>
    %17 = stablehlo.divide %13, %16 : tensor<8x10xf32>
    return %17 : tensor<8x10xf32>
  }
  func.func private @relu(%arg0: tensor<8x32xf32> {mhlo.layout_mode = "default"}) -> (tensor<8x32xf32> {mhlo.layout_mode = "default"}) {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<8x32xf32>
    %1 = stablehlo.maximum %arg0, %0 : tensor<8x32xf32>
    return %1 : tensor<8x32xf32>
  }
}
