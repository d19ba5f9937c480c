// Package conformance loads the shared numerical conformance cases (HLO
// module, arguments, expected result; format in
// ../shared/conformance/FORMAT.md), runs them on a backend and compares
// results with the suite's rule.
package conformance
