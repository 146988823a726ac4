package driver

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/wasmgap/wasmgap/kernels"
)

// TestStdoutApartFromTheProtocol: with Built.Stdout, a driver answers on the descriptor
// ProtocolFDEnv names and whatever its runtime prints on stdout, between or inside
// answers, goes to Stdout and never into the protocol.
func TestStdoutApartFromTheProtocol(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	script := `echo "printed before ready"
echo "ready sh test" >&$` + ProtocolFDEnv + `
while read line; do echo "printed: $line"; echo "ok 55 55 7" >&$` + ProtocolFDEnv + `; done
`
	b, err := Prepare(context.Background(), "", "fd-test", []File{{Name: "driver.sh", Data: []byte(script)}}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var printed bytes.Buffer
	b.Stdout = &printed
	p, err := b.Run(context.Background(), nil, sh, "driver.sh")
	if err != nil {
		t.Fatal(err)
	}
	k, _ := kernels.Lookup("fib_it")
	r, err := p.CallKernel(context.Background(), k, 1, []int{10})
	if err != nil || r.First != 55 {
		t.Fatalf("call: %+v, %v; want 55", r, err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if got := printed.String(); !strings.Contains(got, "printed before ready") || !strings.Contains(got, "printed: fib_it 1 10") {
		t.Errorf("stdout %q: want what the driver printed, apart from its answers", got)
	}
}
