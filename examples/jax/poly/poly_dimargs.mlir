module @jit_predict attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<i64> {jax.global_constant = "batch"}, %arg1: tensor<4x3xf32>, %arg2: tensor<3xf32>, %arg3: tensor<?x4xf32>, %arg4: tensor<?x3xf32>) -> (tensor<?x3xf32> {jax.result_info = "[0]"}, tensor<?xf32> {jax.result_info = "[1]"}) {
    %0 = stablehlo.dot_general %arg3, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<?x4xf32>, tensor<4x3xf32>) -> tensor<?x3xf32>
    %1 = stablehlo.reshape %arg2 : (tensor<3xf32>) -> tensor<1x3xf32>
    %2 = stablehlo.convert %arg0 : (tensor<i64>) -> tensor<i32>
    %3 = stablehlo.reshape %2 : (tensor<i32>) -> tensor<1xi32>
    %c = stablehlo.constant dense<3> : tensor<1xi32>
    %4 = stablehlo.concatenate %3, %c, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
    %5 = stablehlo.dynamic_broadcast_in_dim %1, %4, dims = [0, 1] : (tensor<1x3xf32>, tensor<2xi32>) -> tensor<?x3xf32>
    %6 = stablehlo.add %0, %5 : tensor<?x3xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %7 = stablehlo.dynamic_broadcast_in_dim %cst, %4, dims = [] : (tensor<f32>, tensor<2xi32>) -> tensor<?x3xf32>
    %8 = stablehlo.maximum %6, %7 : tensor<?x3xf32>
    %9 = stablehlo.add %8, %arg4 : tensor<?x3xf32>
    %10 = stablehlo.reduce(%9 init: %cst) applies stablehlo.add across dimensions = [1] : (tensor<?x3xf32>, tensor<f32>) -> tensor<?xf32>
    return %9, %10 : tensor<?x3xf32>, tensor<?xf32>
  }
}
