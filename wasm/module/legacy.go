package main

// The loop tests' exports before they took their catalogue names: loop_test1 is test1,
// loop_test1_batch is test1_batch, and so on. They are kept as aliases for one release, so
// that hosts written against the old names keep working; new hosts call the catalogue
// names. Each alias calls the same Go function as its new name.

//go:wasmexport loop_test1
func legacyLoopTest1(big, small int32) int64 { return loopTest1(big, small) }

//go:wasmexport loop_test1_batch
func legacyLoopTest1Batch(big, small int32, reps int32) int64 {
	return loopTest1Batch(big, small, reps)
}

//go:wasmexport loop_test1b
func legacyLoopTest1b(big, small int32) int64 { return loopTest1b(big, small) }

//go:wasmexport loop_test1b_batch
func legacyLoopTest1bBatch(big, small int32, reps int32) int64 {
	return loopTest1bBatch(big, small, reps)
}

//go:wasmexport loop_test2
func legacyLoopTest2(big, small int32) int64 { return loopTest2(big, small) }

//go:wasmexport loop_test2_batch
func legacyLoopTest2Batch(big, small int32, reps int32) int64 {
	return loopTest2Batch(big, small, reps)
}

//go:wasmexport loop_test3
func legacyLoopTest3(big, small int32) int64 { return loopTest3(big, small) }

//go:wasmexport loop_test3_batch
func legacyLoopTest3Batch(big, small int32, reps int32) int64 {
	return loopTest3Batch(big, small, reps)
}

//go:wasmexport loop_test4
func legacyLoopTest4(big, small int32) int64 { return loopTest4(big, small) }

//go:wasmexport loop_test4_batch
func legacyLoopTest4Batch(big, small int32, reps int32) int64 {
	return loopTest4Batch(big, small, reps)
}

//go:wasmexport loop_test5
func legacyLoopTest5(big, small int32) int64 { return loopTest5(big, small) }

//go:wasmexport loop_test5_batch
func legacyLoopTest5Batch(big, small int32, reps int32) int64 {
	return loopTest5Batch(big, small, reps)
}

//go:wasmexport loop_test6
func legacyLoopTest6(big, small int32) int64 { return loopTest6(big, small) }

//go:wasmexport loop_test6_batch
func legacyLoopTest6Batch(big, small int32, reps int32) int64 {
	return loopTest6Batch(big, small, reps)
}

//go:wasmexport loop_test7
func legacyLoopTest7(large int32) int64 { return loopTest7(large) }

//go:wasmexport loop_test7_batch
func legacyLoopTest7Batch(large int32, reps int32) int64 { return loopTest7Batch(large, reps) }

//go:wasmexport loop_test8
func legacyLoopTest8(large int32) int64 { return loopTest8(large) }

//go:wasmexport loop_test8_batch
func legacyLoopTest8Batch(large int32, reps int32) int64 { return loopTest8Batch(large, reps) }

//go:wasmexport loop_test8b
func legacyLoopTest8b(large int32) int64 { return loopTest8b(large) }

//go:wasmexport loop_test8b_batch
func legacyLoopTest8bBatch(large int32, reps int32) int64 { return loopTest8bBatch(large, reps) }
