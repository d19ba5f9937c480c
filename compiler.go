package axle

// The CPU backend's engine compiles with the compiler it finds
// registered (package backend/cpu/frontend); importing the compiler
// registers it. A program built on this package compiles at run time and
// so links it; an ahead-of-time package does not.
import _ "github.com/axle-ml/axle/backend/cpu/compiler"
