package main

import "github.com/axle-ml/axle/hlo"

// verifyModule checks a parsed module with XLA's HloVerifier rules.
var verifyModule = hlo.Verify
