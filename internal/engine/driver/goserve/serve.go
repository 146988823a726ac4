// Package goserve serves the line protocol of package internal/engine/driver (see its package
// comment) for a driver written in Go: the gccgo build of the kernels (package internal/engine/gccgo)
// and a user's kernel built natively (package custom). It imports the standard library
// alone, so that a build which sees nothing of this module (gccgo, a user's module with no
// network) compiles its source as one more file of its main package (Source).
package goserve

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// Param is one parameter of a kernel, with its allowed range.
type Param struct {
	Name     string
	Min, Max int
}

// Kernel is one kernel a driver serves.
type Kernel struct {
	Name   string
	Params []Param
	// Call calls the kernel with len(Params) arguments.
	Call func(args []int) int64
}

// maxReps is driver.MaxReps, repeated here so that the file imports nothing of the module.
const maxReps = 1_000_000_000

const usage = "want <kernel> <reps> <arg1> [<arg2>]"

// Serve writes the ready line ("ready <language> <runtime>"), then answers every request
// line read from in on out, until in ends.
func Serve(in io.Reader, out io.Writer, language, runtime string, ks []Kernel) error {
	w := bufio.NewWriter(out)
	fmt.Fprintf(w, "ready %s %s\n", language, runtime)
	if err := w.Flush(); err != nil {
		return err
	}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 4096), 1<<20)
	for sc.Scan() {
		w.WriteString(Answer(sc.Text(), ks))
		w.WriteByte('\n')
		if err := w.Flush(); err != nil {
			return err
		}
	}
	return sc.Err()
}

// maxSamples is driver.MaxSamples, the most samples of one "times" request.
const maxSamples = 1000

const timesUsage = "want times <kernel> <samples> <group> <arg1> [<arg2>]"

// Answer serves one request line: "ok <first> <sum> <elapsed ns>", "times <first> <sum>
// <t1> ... <tN>" for a "times" request (driver's per-call mode), or "error <message>".
func Answer(line string, ks []Kernel) string {
	f := strings.Fields(line)
	if len(f) > 0 && f[0] == "times" {
		return answerTimes(f[1:], ks)
	}
	k, reps, args, errAnswer := parse(f, ks)
	if k == nil {
		return errAnswer
	}
	call := k.Call
	start := time.Now()
	first := call(args)
	sum := first
	for i := 1; i < reps; i++ {
		sum += call(args)
	}
	elapsed := time.Since(start)
	return fmt.Sprintf("ok %d %d %d", first, sum, elapsed.Nanoseconds())
}

// answerTimes serves "times <kernel> <samples> <group> <args...>" (f without "times"):
// samples × group calls, the clock read between every group.
func answerTimes(f []string, ks []Kernel) string {
	if len(f) < 4 {
		return "error too few fields: " + timesUsage
	}
	samples, err := strconv.Atoi(f[1])
	if err != nil || samples < 1 || samples > maxSamples {
		return fmt.Sprintf("error samples %q is not allowed: want an integer from 1 to %d", f[1], maxSamples)
	}
	k, group, args, errAnswer := parse(append([]string{f[0]}, f[2:]...), ks)
	if k == nil {
		return errAnswer
	}
	var b strings.Builder
	times := make([]time.Duration, samples)
	var first, sum int64
	for i := range times {
		start := time.Now()
		v := k.Call(args)
		part := v
		for j := 1; j < group; j++ {
			part += k.Call(args)
		}
		times[i] = time.Since(start)
		if i == 0 {
			first = v
		}
		sum += part
	}
	fmt.Fprintf(&b, "times %d %d", first, sum)
	for _, d := range times {
		fmt.Fprintf(&b, " %d", d.Nanoseconds())
	}
	return b.String()
}

// parse checks a request's fields, <kernel> <reps> <args...>: the kernel, reps and
// arguments, or a nil kernel and the error answer.
func parse(f []string, ks []Kernel) (k *Kernel, reps int, args []int, errAnswer string) {
	switch {
	case len(f) == 0:
		return nil, 0, nil, "error empty request: " + usage
	case len(f) < 3:
		return nil, 0, nil, "error too few fields: " + usage
	case len(f) > 4:
		return nil, 0, nil, "error too many fields: " + usage
	}
	for i := range ks {
		if ks[i].Name == f[0] {
			k = &ks[i]
		}
	}
	if k == nil {
		return nil, 0, nil, fmt.Sprintf("error unknown kernel %q", f[0])
	}
	reps, err := strconv.Atoi(f[1])
	if err != nil || reps < 1 || reps > maxReps {
		return nil, 0, nil, fmt.Sprintf("error reps %q is not allowed: want an integer from 1 to %d", f[1], maxReps)
	}
	if len(f)-2 != len(k.Params) {
		return nil, 0, nil, fmt.Sprintf("error %s takes %d arguments, got %d", k.Name, len(k.Params), len(f)-2)
	}
	args = make([]int, len(k.Params))
	for i, p := range k.Params {
		s := f[2+i]
		v, err := strconv.Atoi(s)
		if err != nil {
			return nil, 0, nil, fmt.Sprintf("error %s: %s = %q is not an integer", k.Name, p.Name, s)
		}
		if v < p.Min || v > p.Max {
			return nil, 0, nil, fmt.Sprintf("error %s: %s = %q is out of range: allowed %d to %d", k.Name, p.Name, s, p.Min, p.Max)
		}
		args[i] = v
	}
	return k, reps, args, ""
}
