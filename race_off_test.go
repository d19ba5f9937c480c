//go:build !race

package axle_test

const raceEnabled = false
