package report_test

import (
	"os"
	"time"

	"github.com/wasmgap/wasmgap/internal/measure"
	"github.com/wasmgap/wasmgap/internal/report"
)

func ExampleWrite() {
	ms := time.Millisecond
	r := report.Report{
		Method:      report.Method{Runs: 1, Warmup: 1},
		Environment: report.Environment{CPU: "AMD EPYC", Cores: 2, GOMAXPROCS: 2, Go: "go1.26.8", Modules: map[string]string{"wazero": "v1.12.0", "yaegi": "v0.16.1"}, OS: "linux", Arch: "amd64"},
		Results: []measure.Result{
			{Kernel: "fib_rec", Args: []int{40}, Engine: "native", Runs: 1, Median: float64(410 * ms)},
			{Kernel: "fib_rec", Args: []int{40}, Engine: "wazero-compiler", Runs: 1, Median: float64(1230 * ms)},
			{Kernel: "fib_rec", Args: []int{40}, Engine: "yaegi", Failure: "timed out after 30s"},
		},
	}
	report.Write(os.Stdout, report.FormatMarkdown, r)
	// Output:
	// ### Kernels: median time per call (×ratio to native, same run, same machine)
	//
	// | kernel | native | wazero-compiler | yaegi |
	// |---|---:|---:|---:|
	// | fib_rec(40) | 410 ms ±? | 1.23 s ±? ×3.00 | timed out after 30s |
	//
	// **method:** median of 1 timed sample after 1 warm-up call, one call per sample; ±: half-width of the 95% confidence interval (over the executions, or of one execution's median: ±? under 6 samples), "wide" past ±5%; "busy": other processes took over half a core
	//
	// **environment:** AMD EPYC, 2 cores, GOMAXPROCS 2, go1.26.8 linux/amd64, wazero v1.12.0, yaegi v0.16.1, 0001-01-01T00:00:00Z
}
