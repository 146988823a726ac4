// Command module is kernels.wasm: the kernels compiled to WebAssembly as a WASI preview1
// reactor, with one export per kernel. Build it with `go tool task wasm`, which runs wasm.Build:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -buildvcs=false -o wasm/kernels.wasm ./wasm/module
//
// under the toolchain of go.mod's toolchain line; the result is committed (see package wasm).
//
// A host calls the `_initialize` export once, then any kernel export, one call at a time
// per instance. The exports and their types are the module's public ABI, documented in
// docs/EMBEDDING.md: every argument is an i32, every result an i64 checksum. Each kernel's
// export bears its catalogue name (fib_rec, test1); the loop tests' former names
// (loop_test1, …, and their _batch exports) stay as aliases for one release (legacy.go).
package main

import "github.com/wasmgap/wasmgap/kernels"

// main is never called: a c-shared (reactor) build runs package initialisation from
// `_initialize` and then waits for calls to its exports.
func main() {}

//go:wasmexport fib_it
func fibIt(n int32) int64 { return kernels.FibIt(int(n)) }

//go:wasmexport fib_rec
func fibRec(n int32) int64 { return kernels.FibRec(int(n)) }

//go:wasmexport ack
func ack(n, m int32) int64 { return kernels.Ack(int(n), int(m)) }

//go:wasmexport ack_while
func ackWhile(n, m int32) int64 { return kernels.AckWhile(int(n), int(m)) }

//go:wasmexport test1
func loopTest1(big, small int32) int64 { return kernels.Test1(int(big), int(small)) }

//go:wasmexport test1b
func loopTest1b(big, small int32) int64 { return kernels.Test1b(int(big), int(small)) }

//go:wasmexport test2
func loopTest2(big, small int32) int64 { return kernels.Test2(int(big), int(small)) }

//go:wasmexport test3
func loopTest3(big, small int32) int64 { return kernels.Test3(int(big), int(small)) }

//go:wasmexport test4
func loopTest4(big, small int32) int64 { return kernels.Test4(int(big), int(small)) }

//go:wasmexport test5
func loopTest5(big, small int32) int64 { return kernels.Test5(int(big), int(small)) }

//go:wasmexport test6
func loopTest6(big, small int32) int64 { return kernels.Test6(int(big), int(small)) }

//go:wasmexport test7
func loopTest7(large int32) int64 { return kernels.Test7(int(large)) }

//go:wasmexport test8
func loopTest8(large int32) int64 { return kernels.Test8(int(large)) }

//go:wasmexport test8b
func loopTest8b(large int32) int64 { return kernels.Test8b(int(large)) }

// The batch exports run a kernel reps times inside the module and return the sum of the
// values, wrapped to int64: <export>_batch takes the kernel's arguments, then reps (≥ 1;
// less runs nothing and returns 0). A host that times k calls through one batch call times
// the engine's code, not k crossings from the host into the module (the native engine's
// engine.Batcher, in wasm). nop does nothing and returns kernels.NopValue: timed one call
// from the host per iteration (the catalogue's host_call), it is the host's cost of one call;
// it has no batch export, which would time no crossing.

// batch calls f reps times and returns the sum of its values.
func batch(reps int32, f func() int64) int64 {
	var sum int64
	for i := int32(0); i < reps; i++ {
		sum += f()
	}
	return sum
}

//go:wasmexport nop
func nop() int64 { return kernels.Nop() }

//go:wasmexport fib_it_batch
func fibItBatch(n int32, reps int32) int64 {
	return batch(reps, func() int64 { return kernels.FibIt(int(n)) })
}

//go:wasmexport fib_rec_batch
func fibRecBatch(n int32, reps int32) int64 {
	return batch(reps, func() int64 { return kernels.FibRec(int(n)) })
}

//go:wasmexport ack_batch
func ackBatch(n, m int32, reps int32) int64 {
	return batch(reps, func() int64 { return kernels.Ack(int(n), int(m)) })
}

//go:wasmexport ack_while_batch
func ackWhileBatch(n, m int32, reps int32) int64 {
	return batch(reps, func() int64 { return kernels.AckWhile(int(n), int(m)) })
}

//go:wasmexport test1_batch
func loopTest1Batch(big, small int32, reps int32) int64 {
	return batch(reps, func() int64 { return kernels.Test1(int(big), int(small)) })
}

//go:wasmexport test1b_batch
func loopTest1bBatch(big, small int32, reps int32) int64 {
	return batch(reps, func() int64 { return kernels.Test1b(int(big), int(small)) })
}

//go:wasmexport test2_batch
func loopTest2Batch(big, small int32, reps int32) int64 {
	return batch(reps, func() int64 { return kernels.Test2(int(big), int(small)) })
}

//go:wasmexport test3_batch
func loopTest3Batch(big, small int32, reps int32) int64 {
	return batch(reps, func() int64 { return kernels.Test3(int(big), int(small)) })
}

//go:wasmexport test4_batch
func loopTest4Batch(big, small int32, reps int32) int64 {
	return batch(reps, func() int64 { return kernels.Test4(int(big), int(small)) })
}

//go:wasmexport test5_batch
func loopTest5Batch(big, small int32, reps int32) int64 {
	return batch(reps, func() int64 { return kernels.Test5(int(big), int(small)) })
}

//go:wasmexport test6_batch
func loopTest6Batch(big, small int32, reps int32) int64 {
	return batch(reps, func() int64 { return kernels.Test6(int(big), int(small)) })
}

//go:wasmexport test7_batch
func loopTest7Batch(large int32, reps int32) int64 {
	return batch(reps, func() int64 { return kernels.Test7(int(large)) })
}

//go:wasmexport test8_batch
func loopTest8Batch(large int32, reps int32) int64 {
	return batch(reps, func() int64 { return kernels.Test8(int(large)) })
}

//go:wasmexport test8b_batch
func loopTest8bBatch(large int32, reps int32) int64 {
	return batch(reps, func() int64 { return kernels.Test8b(int(large)) })
}
