module @jit_f attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<8x16xf32> {mhlo.sharding = "{devices=[4,1]<=[4]}"}, %arg1: tensor<16x4xf32> {mhlo.sharding = "{replicated}"}) -> (tensor<8x4xf32> {jax.result_info = "", mhlo.sharding = "{devices=[4,1]<=[4]}"}) {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
    %1 = stablehlo.custom_call @Sharding(%0) {mhlo.sharding = "{devices=[4,1]<=[4]}"} : (tensor<8x4xf32>) -> tensor<8x4xf32>
    %2 = stablehlo.tanh %1 : tensor<8x4xf32>
    return %2 : tensor<8x4xf32>
  }
}
