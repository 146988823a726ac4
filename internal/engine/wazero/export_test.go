package wazero

// BuiltModule returns kernels.wasm as TestMain built it, for the examples.
func BuiltModule() []byte { return testModule }
