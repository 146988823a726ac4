// Package history holds the source articles' published figures as data: every time (or
// failure) with the language, version and hardware it was measured on, the article and
// table it comes from, and the kernel it maps to. Reports print them beside live rows,
// always labelled as historical: they were measured on other machines, years ago.
package history

import "github.com/wasmgap/wasmgap/kernels"

// Figure is one published figure: one kernel call in one language on one machine.
type Figure struct {
	// Table names the article's table the figure comes from (see the Table* constants).
	Table string `json:"table"`
	// Article is the source article's title (kernels.ArticleRecursion or ArticleLoops).
	Article string `json:"article"`
	// Label is the column heading as the article gives it: "PHP 5.5.9", "hhvm 3.8.1".
	Label    string `json:"label"`
	Language string `json:"language"`
	Version  string `json:"version"`
	Hardware string `json:"hardware"`
	// Kernel is the kernel of this project the figure corresponds to, and Args its
	// arguments in the article's run.
	Kernel string `json:"kernel"`
	Args   []int  `json:"args"`
	// Text is the figure as printed in the article: "45.0391s", "Stack overflow".
	Text string `json:"text"`
	// Seconds is the time in seconds when the figure is a time (Failure is empty).
	Seconds float64 `json:"seconds"`
	// Failure is what happened instead of a time: "stack overflow", "did not finish".
	Failure string `json:"failure,omitempty"`
	// Note says how the article's code differs from the kernel, when it does.
	Note string `json:"note,omitempty"`
}

// Failed reports whether the figure is a failure rather than a time.
func (f Figure) Failed() bool { return f.Failure != "" }

// The article tables the figures come from.
const (
	TableFib       = "fib(40)"
	TableAck       = "ack(3,10)"
	TableLoops2014 = "loops: PHP 5.4.4 and HHVM (2014-05-04)"
	TableLoopsNew  = "loops: new results"
)

// Hardware as the articles describe it.
const (
	HardwareRecursion = "AMD Opteron 6128 3 GHz, virtualized, 64-bit"
	HardwareLoops2014 = "QEMU 2.3 GHz, 64-bit"
	HardwareLoopsNew  = "AMD Opteron 6128 2 GHz, virtualized"
)

// Tables lists the article tables in the order reports print them.
func Tables() []string {
	return []string{TableFib, TableAck, TableLoops2014, TableLoopsNew}
}

// All returns every figure, table by table, in the articles' order.
func All() []Figure {
	out := make([]Figure, 0, len(figures))
	for _, f := range figures {
		f.Args = append([]int(nil), f.Args...)
		out = append(out, f)
	}
	return out
}

// ForKernels returns the figures of the named kernels, in the articles' order.
func ForKernels(names ...string) []Figure {
	want := make(map[string]bool, len(names))
	for _, n := range names {
		want[n] = true
	}
	var out []Figure
	for _, f := range All() {
		if want[f.Kernel] {
			out = append(out, f)
		}
	}
	return out
}

// Notes used by several figures.
const (
	noteCWhole = "the whole program (fib_it(40) then fib_rec(40)) timed by `time`, " +
		"process start included; the article gives one figure for both"
	noteCAckWhole = "the whole program (ack_while(3, 10) then ack(3, 10)) timed by `time`, " +
		"process start included; the article gives one figure for both"
	noteHHVMAck = "the error ended the script: line 12 of the script as printed is inside " +
		"ack_while, which runs before ack"
	noteHHVMAckNotRun = "not reached: the script died of a stack overflow in ack_while (line 12), which runs first"
	noteZephirAck     = "the Zephir code calls ack(3, 8), not ack(3, 10), and runs it first; " +
		"the error ended the script"
	noteZephirAckWhile = "not reached: the script died in ack(3, 8), which runs first"
	noteNewJS1         = "js-test1: nested for loops with the lengths read outside (like test5), loose =="
	noteNewJS2         = "js-test2: nested for…in over keys with lookups array[key] == array2[key2] (closest to test3)"
	noteNewJS3         = "js-test3: for over 1,000,000 elements, array3[key]++, length read outside (like test8b)"
	noteCpp1           = "nested for over std::vector<int> with sizes read outside (like test5); an empty if"
	noteCpp1O3         = noteCpp1 + ": -O3 deleted the loop (the cautionary tale behind this project's checksums)"
	noteCpp2           = "for over 1,000,000 ints, array3[i]++, size read outside (like test8b)"
	noteGo1            = "nested for over fixed-size arrays with lengths read outside (like test5); an empty if"
	noteGo2            = "for over a [1000000]int, array3[key]++, length read outside (like test8b)"
	noteJava1          = "nested for over ArrayList<Integer> with .equals (like test5)"
	noteJava2          = "nested for over Vector<Integer> (synchronized) with .equals (like test5)"
	noteJava3          = "for over an ArrayList<Integer> of 1,000,000, set(i, get(i)+1) (like test8b)"
	noteJava4          = "for over a Vector<Integer> of 1,000,000, set(i, get(i)+1) (like test8b)"
	noteZephir1        = "nested while loops (like test5), but the inner counter i2 is never reset, " +
		"so the inner loop runs for the first outer element only: 1,000 comparisons, not 50,000,000"
	noteZephir2 = "while over 1,000,000 elements, array3[i] += 1 (like test8b)"
)

var (
	fib40 = []int{40}
	ack   = []int{3, 10}
	pair  = []int{50_000, 1_000}
	large = []int{1_000_000}
)

// rec builds a recursion-article figure.
func rec(table, label, lang, version, kernel string, args []int, text string, seconds float64) Figure {
	return Figure{
		Table: table, Article: kernels.ArticleRecursion, Label: label, Language: lang, Version: version,
		Hardware: HardwareRecursion, Kernel: kernel, Args: args, Text: text, Seconds: seconds,
	}
}

func fail(f Figure, failure, note string) Figure {
	f.Seconds = 0
	f.Failure = failure
	f.Note = note
	return f
}

func note(f Figure, note string) Figure {
	f.Note = note
	return f
}

// loopTests are the loop kernels in the order of the article's result lines.
var loopTests = []string{"test1", "test1b", "test2", "test3", "test4", "test5", "test6", "test7", "test8", "test8b"}

// loopRow builds the figures of one line of ten loop results, test1 to test8b.
func loopRow(table, hardware, label, lang, version string, texts []string, seconds []float64) []Figure {
	if len(texts) != len(loopTests) || len(seconds) != len(loopTests) {
		panic("history: a loop row has one figure per test, test1 to test8b")
	}
	out := make([]Figure, len(loopTests))
	for i, name := range loopTests {
		args := pair
		if i >= 7 {
			args = large
		}
		out[i] = Figure{
			Table: table, Article: kernels.ArticleLoops, Label: label, Language: lang, Version: version,
			Hardware: hardware, Kernel: name, Args: args, Text: texts[i], Seconds: seconds[i],
		}
	}
	return out
}

// loopNew builds one figure of the "new results" table for a language that ran only some
// of the tests.
func loopNew(label, lang, version, kernel string, args []int, text string, seconds float64, note string) Figure {
	return Figure{
		Table: TableLoopsNew, Article: kernels.ArticleLoops, Label: label, Language: lang, Version: version,
		Hardware: HardwareLoopsNew, Kernel: kernel, Args: args, Text: text, Seconds: seconds, Note: note,
	}
}

var figures = func() []Figure {
	f := []Figure{
		// fib(40): each language prints fib_it(40), then fib_rec(40).
		rec(TableFib, "PHP 5.5.9", "PHP", "5.5.9", "fib_it", fib40, "0.0000s", 0),
		rec(TableFib, "PHP 5.5.9", "PHP", "5.5.9", "fib_rec", fib40, "45.0391s", 45.0391),
		rec(TableFib, "PHP 7.0.0", "PHP", "7.0.0", "fib_it", fib40, "0.0000s", 0),
		rec(TableFib, "PHP 7.0.0", "PHP", "7.0.0", "fib_rec", fib40, "19.4653s", 19.4653),
		rec(TableFib, "HHVM 3.8.1", "HHVM", "3.8.1", "fib_it", fib40, "0.0060s", 0.0060),
		rec(TableFib, "HHVM 3.8.1", "HHVM", "3.8.1", "fib_rec", fib40, "1.7428s", 1.7428),
		rec(TableFib, "Go 1.2.1", "Go", "1.2.1", "fib_it", fib40, "0.0000017s", 0.0000017),
		rec(TableFib, "Go 1.2.1", "Go", "1.2.1", "fib_rec", fib40, "0.9577085s", 0.9577085),
		rec(TableFib, "Java OpenJDK 1.7", "Java", "OpenJDK 1.7", "fib_it", fib40, "0.0s", 0),
		rec(TableFib, "Java OpenJDK 1.7", "Java", "OpenJDK 1.7", "fib_rec", fib40, "0.565s", 0.565),
		note(rec(TableFib, "C (gcc 4.7)", "C", "gcc 4.7 -O3", "fib_rec", fib40, "0.358s", 0.358), noteCWhole),
		rec(TableFib, "node.js 0.10.25", "JavaScript", "node.js 0.10.25", "fib_it", fib40, "0.007s", 0.007),
		rec(TableFib, "node.js 0.10.25", "JavaScript", "node.js 0.10.25", "fib_rec", fib40, "1.667s", 1.667),
		rec(TableFib, "Zephir 0.7.1b", "Zephir", "0.7.1b", "fib_it", fib40, "0.000s", 0),
		fail(rec(TableFib, "Zephir 0.7.1b", "Zephir", "0.7.1b", "fib_rec", fib40, "did not finish.", 0), "did not finish", ""),

		// ack(3,10): each language prints ack_while(3, 10), then ack(3, 10).
		rec(TableAck, "PHP 5.5.9", "PHP", "5.5.9", "ack_while", ack, "14.5458s", 14.5458),
		rec(TableAck, "PHP 5.5.9", "PHP", "5.5.9", "ack", ack, "16.1864s", 16.1864),
		rec(TableAck, "PHP 7.0.0", "PHP", "7.0.0", "ack_while", ack, "3.5186s", 3.5186),
		rec(TableAck, "PHP 7.0.0", "PHP", "7.0.0", "ack", ack, "6.0263s", 6.0263),
		fail(rec(TableAck, "HHVM 3.8.1", "HHVM", "3.8.1", "ack_while", ack, "Fatal error: Stack overflow in /ack.php on line 12", 0), "stack overflow", noteHHVMAck),
		fail(rec(TableAck, "HHVM 3.8.1", "HHVM", "3.8.1", "ack", ack, "(no figure)", 0), "not reached", noteHHVMAckNotRun),
		rec(TableAck, "Go 1.2.1", "Go", "1.2.1", "ack_while", ack, "0.292307s", 0.292307),
		rec(TableAck, "Go 1.2.1", "Go", "1.2.1", "ack", ack, "0.346981s", 0.346981),
		rec(TableAck, "Java OpenJDK 1.7", "Java", "OpenJDK 1.7", "ack_while", ack, "0.121", 0.121),
		rec(TableAck, "Java OpenJDK 1.7", "Java", "OpenJDK 1.7", "ack", ack, "0.222", 0.222),
		note(rec(TableAck, "C (gcc 4.7)", "C", "gcc 4.7 -O3", "ack", ack, "0.090s", 0.090), noteCAckWhole),
		rec(TableAck, "node.js 0.10.25", "JavaScript", "node.js 0.10.25", "ack_while", ack, "0.378s", 0.378),
		rec(TableAck, "node.js 0.10.25", "JavaScript", "node.js 0.10.25", "ack", ack, "0.657s", 0.657),
		fail(rec(TableAck, "Zephir 0.7.1b", "Zephir", "0.7.1b", "ack", []int{3, 8}, "PHP Fatal error: Maximum recursion depth exceeded in Command line code on line 1", 0), "maximum recursion depth exceeded", noteZephirAck),
		fail(rec(TableAck, "Zephir 0.7.1b", "Zephir", "0.7.1b", "ack_while", []int{3, 8}, "(no figure)", 0), "not reached", noteZephirAckWhile),
	}

	f = append(f, loopRow(TableLoops2014, HardwareLoops2014, "php 5.4.4", "PHP", "5.4.4",
		[]string{"2.78s", "2.90s", "2.97s", "6.90s", "6.27s", "5.83s", "6.24s", "0.07s", "0.24s", "0.11s"},
		[]float64{2.78, 2.90, 2.97, 6.90, 6.27, 5.83, 6.24, 0.07, 0.24, 0.11})...)
	f = append(f, loopRow(TableLoops2014, HardwareLoops2014, "hhvm (2014-05-04)", "HHVM", "2014-05-04",
		[]string{"0.47s", "0.44s", "0.44s", "1.36s", "1.33s", "1.13s", "1.15s", "0.04s", "0.04s", "0.03s"},
		[]float64{0.47, 0.44, 0.44, 1.36, 1.33, 1.13, 1.15, 0.04, 0.04, 0.03})...)

	f = append(f, loopRow(TableLoopsNew, HardwareLoopsNew, "php 5.5.9", "PHP", "5.5.9",
		[]string{"4.71", "4.77", "6.43", "9.20", "10.81", "8.76", "11.09", "0.15", "0.37", "0.20"},
		[]float64{4.71, 4.77, 6.43, 9.20, 10.81, 8.76, 11.09, 0.15, 0.37, 0.20})...)
	f = append(f, loopRow(TableLoopsNew, HardwareLoopsNew, "php 7.0", "PHP", "7.0 (2015-8-1)",
		[]string{"1.34", "1.69", "1.39", "3.79", "3.36", "3.51", "3.69", "0.11", "0.12", "0.08"},
		[]float64{1.34, 1.69, 1.39, 3.79, 3.36, 3.51, 3.69, 0.11, 0.12, 0.08})...)
	f = append(f, loopRow(TableLoopsNew, HardwareLoopsNew, "hhvm 3.8.1", "HHVM", "3.8.1",
		[]string{"0.65", "0.61", "0.68", "1.34", "1.44", "1.06", "1.14", "0.09", "0.07", "0.05"},
		[]float64{0.65, 0.61, 0.68, 1.34, 1.44, 1.06, 1.14, 0.09, 0.07, 0.05})...)

	// The other languages of the new results ran their own programs, which cover only
	// some tests: each figure says which test it is closest to.
	f = append(f,
		loopNew("node.js 0.10.25", "JavaScript", "node.js 0.10.25", "test5", pair, "1.953", 1.953, noteNewJS1),
		loopNew("node.js 0.10.25", "JavaScript", "node.js 0.10.25", "test3", pair, "9.218", 9.218, noteNewJS2),
		loopNew("node.js 0.10.25", "JavaScript", "node.js 0.10.25", "test8b", large, "0.051", 0.051, noteNewJS3),
		loopNew("c++ gcc 4.8.4", "C++", "gcc 4.8.4", "test5", pair, "0.91601", 0.91601, noteCpp1),
		loopNew("c++ gcc 4.8.4", "C++", "gcc 4.8.4", "test8b", large, "0.01149", 0.01149, noteCpp2),
		loopNew("c++ -O3 gcc 4.8.4", "C++", "gcc 4.8.4 -O3", "test5", pair, "0.00000", 0, noteCpp1O3),
		loopNew("c++ -O3 gcc 4.8.4", "C++", "gcc 4.8.4 -O3", "test8b", large, "0.00101", 0.00101, noteCpp2),
		loopNew("go 1.4.2", "Go", "1.4.2", "test5", pair, "0.15866", 0.15866, noteGo1),
		loopNew("go 1.4.2", "Go", "1.4.2", "test8b", large, "0.00427", 0.00427, noteGo2),
		loopNew("OpenJDK 1.7.0_79 ArrayList", "Java", "OpenJDK 1.7.0_79", "test5", pair, "0.114", 0.114, noteJava1),
		loopNew("OpenJDK 1.7.0_79 Vector", "Java", "OpenJDK 1.7.0_79", "test5", pair, "3.732", 3.732, noteJava2),
		loopNew("OpenJDK 1.7.0_79 ArrayList", "Java", "OpenJDK 1.7.0_79", "test8b", large, "0.124", 0.124, noteJava3),
		loopNew("OpenJDK 1.7.0_79 Vector", "Java", "OpenJDK 1.7.0_79", "test8b", large, "0.253", 0.253, noteJava4),
		loopNew("Zephir 0.7.1b", "Zephir", "0.7.1b", "test5", pair, "0.0001", 0.0001, noteZephir1),
		loopNew("Zephir 0.7.1b", "Zephir", "0.7.1b", "test8b", large, "0.1510", 0.1510, noteZephir2),
	)
	return f
}()
