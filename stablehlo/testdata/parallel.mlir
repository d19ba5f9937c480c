// RUN: stablehlo-translate --interpret -split-input-file %s
// Hand-worked collectives over two replicas.

module @all_reduce {
  func.func @f(%x : tensor<2xi64>) -> tensor<2xi64> {
    %r = "stablehlo.all_reduce"(%x) ({
      ^bb0(%a: tensor<i64>, %b: tensor<i64>):
        %s = stablehlo.add %a, %b : tensor<i64>
        stablehlo.return %s : tensor<i64>
    }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<2xi64>) -> tensor<2xi64>
    return %r : tensor<2xi64>
  }
  func.func @main() {
    %a = stablehlo.constant dense<[1, 2]> : tensor<2xi64>
    %b = stablehlo.constant dense<[10, 20]> : tensor<2xi64>
    %r:2 = "interpreter.run_parallel"(%a, %b) {programs = [[@f], [@f]]} : (tensor<2xi64>, tensor<2xi64>) -> (tensor<2xi64>, tensor<2xi64>)
    check.expect_eq_const %r#0, dense<[11, 22]> : tensor<2xi64>
    check.expect_eq_const %r#1, dense<[11, 22]> : tensor<2xi64>
    func.return
  }
}

// -----

module @permute_and_ids {
  func.func @f(%x : tensor<2xi64>) -> (tensor<2xi64>, tensor<ui32>) {
    %r = "stablehlo.collective_permute"(%x) {source_target_pairs = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<2xi64>) -> tensor<2xi64>
    %id = stablehlo.replica_id : tensor<ui32>
    return %r, %id : tensor<2xi64>, tensor<ui32>
  }
  func.func @main() {
    %a = stablehlo.constant dense<[1, 2]> : tensor<2xi64>
    %b = stablehlo.constant dense<[10, 20]> : tensor<2xi64>
    %r:4 = "interpreter.run_parallel"(%a, %b) {programs = [[@f], [@f]]} : (tensor<2xi64>, tensor<2xi64>) -> (tensor<2xi64>, tensor<ui32>, tensor<2xi64>, tensor<ui32>)
    check.expect_eq_const %r#0, dense<[0, 0]> : tensor<2xi64>
    check.expect_eq_const %r#1, dense<0> : tensor<ui32>
    check.expect_eq_const %r#2, dense<[1, 2]> : tensor<2xi64>
    check.expect_eq_const %r#3, dense<1> : tensor<ui32>
    func.return
  }
}

// -----

module @infeed_queue {
  func.func @f(%t : !stablehlo.token) -> (tensor<i32>, tensor<i32>) {
    %a:2 = "stablehlo.infeed"(%t) : (!stablehlo.token) -> (tensor<i32>, !stablehlo.token)
    %b:2 = "stablehlo.infeed"(%a#1) : (!stablehlo.token) -> (tensor<i32>, !stablehlo.token)
    %o = "stablehlo.outfeed"(%b#0, %b#1) : (tensor<i32>, !stablehlo.token) -> !stablehlo.token
    return %a#0, %b#0 : tensor<i32>, tensor<i32>
  }
  func.func @q0() -> tensor<i32> {
    %c = stablehlo.constant dense<7> : tensor<i32>
    return %c : tensor<i32>
  }
  func.func @q1() -> tensor<i32> {
    %c = stablehlo.constant dense<9> : tensor<i32>
    return %c : tensor<i32>
  }
  func.func @main() {
    %t = stablehlo.after_all : !stablehlo.token
    %r:2 = "interpreter.run_parallel"(%t) {infeed = [@q0, @q1], programs = [[@f]]} : (!stablehlo.token) -> (tensor<i32>, tensor<i32>)
    check.expect_eq_const %r#0, dense<7> : tensor<i32>
    check.expect_eq_const %r#1, dense<9> : tensor<i32>
    func.return
  }
}
