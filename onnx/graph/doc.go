// Package graph runs ONNX graphs the way TensorFlow hands graphs to XLA.
//
// At load, every node is placed on the highest-priority device that
// supports it: the compiled cpu device (priority 50) takes nodes with an
// HLO lowering over tensors; the evaluator device (priority 10) takes the
// rest, running each node by itself (its lowering on the reference
// evaluator, or its host kernel for strings, data-dependent shapes,
// sequences and control flow on concrete values). With soft placement off
// a node its preferred device refuses fails the load, naming the node, its
// op and why.
//
// Nodes on the compiled device are grouped into maximal clusters along
// edges, never merging two clusters when a path between them leaves the
// cluster (TensorFlow's mark_for_compilation rule: a merge must not make
// a cycle). Each cluster is one HLO module, compiled at run time for the
// shapes of its inputs (and the values of the few inputs its lowering
// needs as constants: a Reshape's shape, an If's condition) and cached by
// that signature (XlaCompile); then run (XlaRun). A cluster whose
// lowering fails for a signature runs op by op instead when soft
// placement is on.
package graph
