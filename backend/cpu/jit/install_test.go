package jit

// The package's tests generate code: the generator is installed for
// them, as package cpu's compile path installs it.
func init() { InstallGenerator() }
