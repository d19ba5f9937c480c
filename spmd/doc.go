// Package spmd partitions a module written on global shapes with sharding
// annotations into one SPMD program per device, as XLA's SpmdPartitioner
// does for modules that JAX and PyTorch/XLA produce: `num_partitions=N`,
// `sharding={...}` attributes, and @Sharding, @SPMDFullToShardShape and
// @SPMDShardToFullShape custom-calls.
//
// # Shardings
//
// Package hlo keeps the attribute verbatim (hlo.Raw); Parse and Of turn it
// into a Sharding with its tile assignment (the device of every tile).
// Maximal shardings are treated as replicated (every device computes the
// value). last_tile_dims subgroups other than replicated are refused.
//
// # Uneven tilings
//
// A dimension of size D over k tiles gives each device ceil(D/k) of it,
// as XLA does (a vocabulary of 50257 over 8 devices: 6283 each, the last
// device 6276 and 7 rows of padding). Shards hold the value padded at the
// end; what the padding holds is unspecified, so rules mask it wherever
// it could reach data (padding.go): a reduce over a padded dimension
// fills it with its init value, a dot or convolution contracting one
// zeroes both operands' padding, gathering a whole value slices it off
// and cutting one into tiles pads first. Split pads arguments with zeros
// and AssembleShape drops the padding of results (Assemble cannot: it
// infers the whole shape from the pieces, right for even tilings only).
// Every rule below handles padded shards; a reshape partitions natively
// only when it leaves an unevenly tiled dimension alone, and a manual
// region (@SPMDFullToShardShape) sees zeros in its shard's padding.
// Tiled dynamic dimensions are refused.
//
// # Propagation
//
// Much simpler than XLA's ShardingPropagation (which runs forward and
// backward over every op, through while loops and calls, and weighs
// alternatives): one forward pass, decided while partitioning.
//   - An annotated instruction gets its annotation (its value is resharded
//     to it when its rule produced another placement).
//   - Unannotated parameters and the entry root are replicated.
//   - Elementwise ops take their first tiled operand's sharding.
//   - dot, convolution, reduce, transpose, broadcast, reshape,
//     dynamic-slice and dynamic-update-slice keep the placement their rule
//     produces (batch-sharded dot → batch-sharded result, ...).
//   - Anything using a manual value (inside a shard_map region) is manual.
//   - A while's state takes its annotation; unannotated, its operand's
//     placement, except that a replicated part the body makes tiled takes
//     that tiling (found by partitioning the body on trial, until nothing
//     changes): cutting the initial value once costs no communication,
//     gathering the body's result would cost one every iteration.
//   - A call's result and a conditional's take the placement the callee's
//     (branch 0's) root comes out with.
//   - Everything else is replicated.
//
// Called computations (while condition and body, call targets,
// conditional branches) are partitioned like the entry, given their
// parameters' placements by the caller, and copied once per placement
// (a body two loops run with different shardings gets two copies).
//
// # Partitioning
//
// Rules that run on shards (native): elementwise ops; dot when the
// operands' tilings line up (batch dimensions alike; contracting
// dimensions alike, then an all-reduce of the partial products; a free
// dimension tiled with the other operand whole), trying the operands as
// placed, then with one of them all-gathered; reduce (an all-reduce with
// the reducer when reduced dimensions are tiled); transpose and
// broadcast; reshape when each tiled dimension maps onto a result
// dimension at the same linear stride; convolution seen as a dot (input
// batch and kernel output features free, input features contracted,
// or with feature groups the features tiled alike when each tile holds
// whole groups; a whole kernel or input is cut locally to fit the other
// operand's feature tiles), any dim_labels, spatial dimensions whole
// (tiled ones would need XLA's halo exchange); dynamic-slice and
// dynamic-update-slice when every tiled dimension is taken whole (its
// start index then clamps to 0 on every shard); tuple and get-tuple-element;
// parameters (their shard shapes); while, call and conditional, whose
// computations run on shards (XLA's HandleWhile: one placement for the
// body's parameter and root, the condition's parameter and the result;
// the condition's root and a conditional's branch index replicated, so
// that every device takes the same path: a reduce over sharded data in a
// condition all-reduces a scalar, anything else it reads sharded is
// gathered; branch roots resharded to one placement). Every rule masks
// padding inside bodies as anywhere else. Every other instruction takes the
// fallback: all-gather its operands, run it on whole values, and
// dynamic-slice this device's tile (offsets from a constant table indexed
// by partition-id) when the result is tiled. Resharding between two
// placements is the same all-gather then slice. Collectives use fresh
// channel ids and explicit groups of partition ids with
// use_global_device_ids, as XLA writes them.
//
// @Sharding becomes a reshard; @SPMDFullToShardShape hands its operand's
// shard to the manual region, whose instructions are copied unchanged
// (their shapes are per-device already); @SPMDShardToFullShape declares the
// manual value to be the shard of its annotated result.
package spmd
