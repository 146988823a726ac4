package runner

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/wasmgap/wasmgap/internal/engine"
	"github.com/wasmgap/wasmgap/internal/measure"
	"github.com/wasmgap/wasmgap/kernels"
)

func TestPlanJobs(t *testing.T) {
	for _, c := range []struct {
		name    string
		plan    Plan
		want    []string // "engine kernel(args)" per job, or nil to check only the count
		count   int
		wantErr string
	}{
		// Every kernel of the catalogue on every registered engine (the Go tiers, the peers, …).
		// Every kernel of the catalogue on every registered engine (the Go tiers, the peers, …),
		// and host_call on the engines that run kernels.wasm.
		{name: "everything", plan: Plan{Options: measure.Defaults()}, count: len(kernels.All())*len(engine.Names()) + len(kernelsWasmEngines())},
		{
			name: "host_call on the engines of kernels.wasm only",
			plan: Plan{Options: measure.Defaults(), Engines: []string{"native", "wazero-compiler", "yaegi", "wazero-interpreter"}, Kernels: []string{"host_call"}},
			want: []string{"wazero-compiler host_call()", "wazero-interpreter host_call()"},
		},
		{
			name:    "host_call on no engine that runs it",
			plan:    Plan{Options: measure.Defaults(), Engines: []string{"native", "yaegi"}, Kernels: []string{"host_call"}},
			wantErr: "not applicable: host_call times one call from a host into kernels.wasm, and native does not run kernels.wasm: choose an engine that runs kernels.wasm (wazero-compiler, wazero-compiler-opt, wazero-interpreter",
		},
		{name: "zero options: measure's defaults", plan: Plan{Engines: []string{"native"}, Kernels: []string{"fib_it"}}, want: []string{"native fib_it(40)"}},
		{
			name: "one engine, two kernels, defaults",
			plan: Plan{Options: measure.Defaults(), Engines: []string{"native"}, Kernels: []string{"fib_rec", "ack"}},
			want: []string{"native fib_rec(40)", "native ack(3, 10)"},
		},
		{
			name: "shared parameter for the kernels that have it",
			plan: Plan{Options: measure.Defaults(), Engines: []string{"native"}, Kernels: []string{"test1", "test7"}, Args: map[string]int{"big": 30_000, "large": 10}},
			want: []string{"native test1(30000, 1000)", "native test7(10)"},
		},
		{
			name: "one kernel's parameter",
			plan: Plan{Options: measure.Defaults(), Engines: []string{"native", "yaegi"}, Kernels: []string{"fib_rec", "fib_it"}, Args: map[string]int{"fib_rec.n": 30}},
			want: []string{"native fib_rec(30)", "yaegi fib_rec(30)", "native fib_it(40)", "yaegi fib_it(40)"},
		},
		{name: "unknown engine", plan: Plan{Options: measure.Defaults(), Engines: []string{"node"}}, wantErr: `unknown engine "node": valid engines are native, wazero-compiler, wazero-compiler-opt, wazero-interpreter, yaegi`},
		{name: "unknown kernel", plan: Plan{Options: measure.Defaults(), Kernels: []string{"test9"}}, wantErr: `unknown kernel "test9": valid kernels are fib_it, fib_rec, ack_while, ack, test1`},
		{name: "unknown parameter", plan: Plan{Options: measure.Defaults(), Kernels: []string{"fib_rec"}, Args: map[string]int{"m": 3}}, wantErr: `no selected kernel has a parameter "m": the parameters are n (0 to 92) for fib_rec`},
		{name: "out of range", plan: Plan{Options: measure.Defaults(), Kernels: []string{"fib_rec"}, Args: map[string]int{"n": 93}}, wantErr: "fib_rec: n = 93 is out of range: allowed 0 to 92"},
		{
			name:    "shared name, one kernel out of range",
			plan:    Plan{Options: measure.Defaults(), Args: map[string]int{"n": 30}},
			wantErr: "ack_while: n = 30 is out of range: allowed 0 to 3 (choose kernels with --kernel, or set one kernel's parameter as ack_while.<name>=<value>)",
		},
		{name: "qualified, kernel not selected", plan: Plan{Options: measure.Defaults(), Kernels: []string{"ack"}, Args: map[string]int{"fib_rec.n": 3}}, wantErr: "argument fib_rec.n: kernel fib_rec is not selected"},
		{name: "qualified, unknown kernel", plan: Plan{Options: measure.Defaults(), Args: map[string]int{"fib.n": 3}}, wantErr: `argument fib.n: unknown kernel "fib"`},
		{name: "qualified, unknown parameter", plan: Plan{Options: measure.Defaults(), Args: map[string]int{"ack.x": 3}}, wantErr: "ack has no parameter x: its parameters are n, m"},
	} {
		t.Run(c.name, func(t *testing.T) {
			jobs, err := c.plan.Jobs()
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("error = %v, want it to contain %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, j := range jobs {
				got = append(got, j.Engine()+" "+j.Label())
			}
			if c.want != nil && !reflect.DeepEqual(got, c.want) {
				t.Errorf("jobs = %q, want %q", got, c.want)
			}
			if c.want == nil && len(jobs) != c.count {
				t.Errorf("%d jobs, want %d", len(jobs), c.count)
			}
		})
	}
}

// Every error names the field at fault, as the page's API reports it.
func TestPlanErrorFields(t *testing.T) {
	for _, c := range []struct {
		plan  Plan
		field string
	}{
		{Plan{Engines: []string{"v8"}, Options: measure.Defaults()}, "engine"},
		{Plan{Kernels: []string{"fib"}, Options: measure.Defaults()}, "kernel"},
		{Plan{Kernels: []string{"fib_rec"}, Args: map[string]int{"fib_rec.n": 93}, Options: measure.Defaults()}, "args.n"},
		{Plan{Kernels: []string{"fib_rec"}, Args: map[string]int{"fib_rec.x": 1}, Options: measure.Defaults()}, "args.x"},
		{Plan{Kernels: []string{"fib_rec"}, Args: map[string]int{"m": 1}, Options: measure.Defaults()}, "args.m"},
	} {
		_, err := c.plan.Jobs()
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != c.field {
			t.Errorf("%+v: error %v, want a FieldError on %q", c.plan, err, c.field)
		}
	}
}

// The counts are taken as given: a warm-up of 0 is none.
func TestPlanOptions(t *testing.T) {
	for _, c := range []struct {
		opts measure.Options
		want measure.Options
	}{
		{measure.Defaults(), measure.Defaults()},
		{measure.Options{Runs: 3}, measure.Options{Runs: 3, Warmup: 0}},
		{measure.Options{Runs: 2, Warmup: 4}, measure.Options{Runs: 2, Warmup: 4}},
	} {
		jobs, err := Plan{Engines: []string{"native"}, Kernels: []string{"fib_it"}, Options: c.opts}.Jobs()
		if err != nil {
			t.Fatal(err)
		}
		if got := jobs[0].Options(); got != c.want {
			t.Errorf("Options %+v became %+v, want %+v", c.opts, got, c.want)
		}
	}
}

func ExamplePlan() {
	jobs, err := Plan{
		Options: measure.Defaults(),
		Engines: []string{"native", "yaegi"},
		Kernels: []string{"fib_rec", "ack"},
		Args:    map[string]int{"fib_rec.n": 30, "m": 8},
	}.Jobs()
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, j := range jobs {
		fmt.Println(j.Engine(), j.Kernel().Name, j.Args())
	}
	_, err = Plan{Kernels: []string{"ack"}, Args: map[string]int{"n": 4}, Options: measure.Defaults()}.Jobs()
	fmt.Println(err)
	// Output:
	// native fib_rec [30]
	// yaegi fib_rec [30]
	// native ack [3 8]
	// yaegi ack [3 8]
	// ack: n = 4 is out of range: allowed 0 to 3
}
