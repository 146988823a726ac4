package external_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/wasmgap/wasmgap/internal/engine/external"
)

// Start a peer, ask it for one timed batch of calls, and read the time per call.
func ExampleStart() {
	ctx := context.Background()
	p, err := external.Start(ctx, "c", external.Options{})
	if errors.Is(err, external.ErrNotInstalled) {
		fmt.Println(err) // e.g. "gcc not installed: apt-get install gcc"
		return
	}
	if err != nil {
		log.Fatal(err)
	}
	defer p.Close()
	fmt.Println(p.Language, p.Runtime, "built in", p.Setup.Build, "started in", p.Setup.Start)

	r, err := p.Call(ctx, "fib_it", 1000, []int{40})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(r.First, r.Sum == 1000*r.First, r.Elapsed/1000, "per call")
}
