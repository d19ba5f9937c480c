// Package ddmath holds scalar math that must be more accurate than Go's
// math package, computed in double-double arithmetic (a value as the
// unevaluated sum of two float64s, about 106 significant bits).
//
// XLA's CPU backend calls the C library's pow, which is nearly correctly
// rounded; Go's math.Pow multiplies by repeated squaring for the integer
// part of the exponent and can be tens of ulps off (pow(0.83, 40.7) is 19
// ulps low). The evaluator and the cpu backend both call Pow here, so they
// agree with each other and with XLA.
package ddmath
