// Package hlotext reads and writes XLA's HLO text format: the modern
// style and old dumps (% prefixes, operand shapes, /*index=N*/ comments),
// with errors that carry FILE:LINE:COL. Print(Parse(text)) reproduces text
// printed by XLA exactly, in both of XLA's forms: the default ToString and
// the short parsable form.
package hlotext
