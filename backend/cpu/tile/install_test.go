package tile

import "github.com/axle-ml/axle/backend/cpu/jit"

// The package's tests compile programs to generated code: the generator
// is installed for them, as package cpu's compile path installs it.
func init() { jit.InstallGenerator() }
