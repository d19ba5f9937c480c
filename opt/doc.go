// Package opt holds Axle's target-independent HLO passes, one file each,
// and the standard pipeline that runs them (pipeline.go). Every pass is a
// pass.Pass; tests give HLO text in and expected HLO text out.
package opt
