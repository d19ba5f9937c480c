module @jit_predict attributes {jax.uses_shape_polymorphism = true, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x3xf32>, %arg1: tensor<3xf32>, %arg2: tensor<?x4xf32>, %arg3: tensor<?x3xf32>) -> (tensor<?x3xf32> {jax.result_info = "[0]"}, tensor<?xf32> {jax.result_info = "[1]"}) {
    %c = stablehlo.constant dense<1> : tensor<i32>
    %0 = stablehlo.get_dimension_size %arg2, dim = 0 : (tensor<?x4xf32>) -> tensor<i32>
    %1 = stablehlo.get_dimension_size %arg3, dim = 0 : (tensor<?x3xf32>) -> tensor<i32>
    %2 = stablehlo.compare  GE, %0, %c,  SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.custom_call @shape_assertion(%2, %0) {api_version = 2 : i32, error_message = "Input shapes do not match the polymorphic shapes specification. Expected value >= 1 for dimension variable 'batch'. Using the following polymorphic shapes specifications: args[2].shape = (batch, 4),args[3].shape = (batch, 3). Obtained dimension variables: 'batch' = {0} from specification 'batch' for dimension args[2].shape[0] (= {0}), . Please see https://docs.jax.dev/en/latest/export/shape_poly.html#shape-assertion-errors for more details.", has_side_effect = true} : (tensor<i1>, tensor<i32>) -> ()
    %3 = stablehlo.compare  EQ, %1, %0,  SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.custom_call @shape_assertion(%3, %1, %0) {api_version = 2 : i32, error_message = "Input shapes do not match the polymorphic shapes specification. Found inconsistency between dimension size args[3].shape[0] (= {0}) and the specification 'batch' (= {1}). Using the following polymorphic shapes specifications: args[2].shape = (batch, 4),args[3].shape = (batch, 3). Obtained dimension variables: 'batch' = {1} from specification 'batch' for dimension args[2].shape[0] (= {1}), . Please see https://docs.jax.dev/en/latest/export/shape_poly.html#shape-assertion-errors for more details.", has_side_effect = true} : (tensor<i1>, tensor<i32>, tensor<i32>) -> ()
    %4:2 = call @_wrapped_jax_export_main(%0, %arg0, %arg1, %arg2, %arg3) : (tensor<i32>, tensor<4x3xf32>, tensor<3xf32>, tensor<?x4xf32>, tensor<?x3xf32>) -> (tensor<?x3xf32>, tensor<?xf32>)
    return %4#0, %4#1 : tensor<?x3xf32>, tensor<?xf32>
  }
  func.func private @_wrapped_jax_export_main(%arg0: tensor<i32> {jax.global_constant = "batch"}, %arg1: tensor<4x3xf32>, %arg2: tensor<3xf32>, %arg3: tensor<?x4xf32>, %arg4: tensor<?x3xf32>) -> (tensor<?x3xf32>, tensor<?xf32>) {
    %0 = stablehlo.dot_general %arg3, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<?x4xf32>, tensor<4x3xf32>) -> tensor<?x3xf32>
    %1 = stablehlo.reshape %arg2 : (tensor<3xf32>) -> tensor<1x3xf32>
    %2 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
    %c = stablehlo.constant dense<3> : tensor<1xi32>
    %3 = stablehlo.concatenate %2, %c, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
    %4 = stablehlo.dynamic_broadcast_in_dim %1, %3, dims = [0, 1] : (tensor<1x3xf32>, tensor<2xi32>) -> tensor<?x3xf32>
    %5 = stablehlo.add %0, %4 : tensor<?x3xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %6 = stablehlo.dynamic_broadcast_in_dim %cst, %3, dims = [] : (tensor<f32>, tensor<2xi32>) -> tensor<?x3xf32>
    %7 = stablehlo.maximum %5, %6 : tensor<?x3xf32>
    %8 = stablehlo.add %7, %arg4 : tensor<?x3xf32>
    %9 = stablehlo.reduce(%8 init: %cst) applies stablehlo.add across dimensions = [1] : (tensor<?x3xf32>, tensor<f32>) -> tensor<?xf32>
    return %8, %9 : tensor<?x3xf32>, tensor<?xf32>
  }
}
