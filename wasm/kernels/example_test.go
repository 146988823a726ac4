package kernels_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/wasmgap/wasmgap/wasm/kernels"
)

// load returns an instance for an example; each example is a program of its own.
func load() *kernels.Instance {
	k, err := kernels.Load(context.Background(), kernels.Options{})
	if err != nil {
		log.Fatal(err)
	}
	return k
}

func ExampleLoad() {
	ctx := context.Background()
	k, err := kernels.Load(ctx, kernels.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer k.Close(ctx)

	v, err := k.FibRec(30)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("fib_rec(30) =", v)
	// Output: fib_rec(30) = 832040
}

// A call that runs out of stack is an error wrapping ErrStackOverflow; the instance then
// starts afresh, so the next call succeeds. wazero's interpreter stops at about 2,000
// frames, which ack(3, 10), about 8,000 calls deep, passes.
func ExampleLoad_interpreter() {
	ctx := context.Background()
	k, err := kernels.Load(ctx, kernels.Options{Interpreter: true})
	if err != nil {
		log.Fatal(err)
	}
	defer k.Close(ctx)

	_, err = k.Ack(3, 10)
	fmt.Println("ack(3, 10): stack overflow:", errors.Is(err, kernels.ErrStackOverflow))
	v, err := k.Ack(2, 3)
	fmt.Println("ack(2, 3) =", v, err)
	// Output:
	// ack(3, 10): stack overflow: true
	// ack(2, 3) = 9 <nil>
}

func ExampleInstance_Call() {
	k := load()
	defer k.Close(context.Background())

	v, err := k.Call("test1", 50_000, 1_000)
	fmt.Println("test1(50000, 1000) =", v, err)
	_, err = k.Call("fib_rec", 100)
	fmt.Println(err)
	_, err = k.Call("fib")
	fmt.Println(err != nil)
	// Output:
	// test1(50000, 1000) = 40999000 <nil>
	// fib_rec: n = 100 is out of range: allowed 0 to 92
	// true
}

func ExampleInstance_FibIt() {
	k := load()
	defer k.Close(context.Background())
	fmt.Println(k.FibIt(92))
	// Output: 7540113804746346429 <nil>
}

func ExampleInstance_FibRec() {
	k := load()
	defer k.Close(context.Background())
	fmt.Println(k.FibRec(30))
	// Output: 832040 <nil>
}

func ExampleInstance_Ack() {
	k := load()
	defer k.Close(context.Background())
	fmt.Println(k.Ack(3, 5))
	// Output: 253 <nil>
}

func ExampleInstance_AckWhile() {
	k := load()
	defer k.Close(context.Background())
	fmt.Println(k.AckWhile(3, 5))
	// Output: 253 <nil>
}

// The pair loop tests return the sum of the values the two arrays share: with big 20,010
// and small 20, the 10 values 40,000 … 40,018.
func ExampleInstance_Test1() {
	k := load()
	defer k.Close(context.Background())
	fmt.Println(k.Test1(20_010, 20))
	// Output: 400090 <nil>
}

func ExampleInstance_Test1b() {
	k := load()
	defer k.Close(context.Background())
	fmt.Println(k.Test1b(20_010, 20))
	// Output: 400090 <nil>
}

func ExampleInstance_Test2() {
	k := load()
	defer k.Close(context.Background())
	fmt.Println(k.Test2(20_010, 20))
	// Output: 400090 <nil>
}

func ExampleInstance_Test3() {
	k := load()
	defer k.Close(context.Background())
	fmt.Println(k.Test3(20_010, 20))
	// Output: 400090 <nil>
}

func ExampleInstance_Test4() {
	k := load()
	defer k.Close(context.Background())
	fmt.Println(k.Test4(20_010, 20))
	// Output: 400090 <nil>
}

func ExampleInstance_Test5() {
	k := load()
	defer k.Close(context.Background())
	fmt.Println(k.Test5(20_010, 20))
	// Output: 400090 <nil>
}

func ExampleInstance_Test6() {
	k := load()
	defer k.Close(context.Background())
	fmt.Println(k.Test6(20_010, 20))
	// Output: 400090 <nil>
}

// The large loop tests return large².
func ExampleInstance_Test7() {
	k := load()
	defer k.Close(context.Background())
	fmt.Println(k.Test7(1_000))
	// Output: 1000000 <nil>
}

func ExampleInstance_Test8() {
	k := load()
	defer k.Close(context.Background())
	fmt.Println(k.Test8(1_000))
	// Output: 1000000 <nil>
}

func ExampleInstance_Test8b() {
	k := load()
	defer k.Close(context.Background())
	fmt.Println(k.Test8b(1_000))
	// Output: 1000000 <nil>
}
