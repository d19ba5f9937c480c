package main

import "github.com/axle-ml/axle/hlo"

// verifyModule is hlo.Verify once the verifier lands.
var verifyModule = func(m *hlo.Module) error { _ = m; return nil }
