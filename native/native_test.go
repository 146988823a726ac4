package native

import (
	"context"
	"testing"

	"github.com/wasmgap/wasmgap/internal/engine"
	"github.com/wasmgap/wasmgap/kernels"
)

var _ engine.Batcher = goEngine{}

func TestRunMatchesExpected(t *testing.T) {
	ctx := context.Background()
	e, err := engine.New(engine.Native)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Load(ctx); err != nil {
		t.Fatal(err)
	}
	defer e.Close(ctx)
	k, _ := kernels.Lookup("ack")
	args := []int{2, 5}
	got, err := e.Run(ctx, k, args)
	if err != nil || got != k.Expected(args) {
		t.Fatalf("Run(%s) = %d, %v; want %d", k.Label(args), got, err, k.Expected(args))
	}
}
