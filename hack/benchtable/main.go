// Command benchtable reads the output of `go test -bench -benchmem` on
// stdin and prints Markdown tables of the median of each benchmark's runs
// (run the benchmarks with -count=N for N runs):
//
//	go test -run='^$' -bench=. -benchmem -count=5 ./test/bench/ | go run ./hack/benchtable
//
// The first table compares the paths of the benchmarks whose name has a
// path=in-process and a path=external element (test/bench names them so):
// one row per benchmark without its path element, with both paths' ns/op,
// their ratio, allocs/op and B/op. The second lists every benchmark with
// every metric it reports. Lines that are not benchmark results are
// ignored, except goos, goarch, cpu and pkg, which head the output, and
// "--- FAIL: Benchmark..." lines: the tables are printed, but the command
// then fails and names the failed benchmarks, because their medians are of
// fewer runs than asked for (make bench pipes go test into it, so its exit
// status is the pipeline's).
package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

func main() {
	res, err := parse(os.Stdin)
	if err == nil {
		err = render(os.Stdout, res)
	}
	if err == nil && len(res.failed) > 0 {
		err = fmt.Errorf("some runs failed, so their medians are of fewer runs (see the go test output): %s", strings.Join(res.failed, ", "))
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchtable:", err)
		os.Exit(1)
	}
}

// Units that go test reports.
const (
	nsPerOp     = "ns/op"
	bytesPerOp  = "B/op"
	allocsPerOp = "allocs/op"
)

// The paths that the first table compares.
const (
	pathKey   = "path="
	inProcess = "in-process"
	external  = "external"
)

// benchmark is the runs of one benchmark.
type benchmark struct {
	// name is the benchmark's name without "Benchmark" and without the
	// -GOMAXPROCS suffix.
	name string
	// units are the units it reports, in the order of its first run.
	units []string
	// values are the values of each run, by unit.
	values map[string][]float64
}

func (b *benchmark) median(unit string) (float64, bool) {
	return median(b.values[unit])
}

// results is what parse reads.
type results struct {
	// config are the "key: value" lines that describe the run (goos,
	// goarch, cpu, pkg), in order, without repeats.
	config     []string
	benchmarks []*benchmark
	// failed are the benchmarks with a failed run, without repeats.
	failed []string
}

var (
	// resultLine is a benchmark result: name, iterations, then value and
	// unit pairs.
	resultLine = regexp.MustCompile(`^Benchmark(\S+)\s+(\d+)\s+(\S.*)$`)
	procs      = regexp.MustCompile(`-\d+$`)
	configLine = regexp.MustCompile(`^(goos|goarch|cpu|pkg):\s+(.+)$`)
	// failLine is a failed run; go test also prints it after a result's
	// name when the run fails before its result.
	failLine = regexp.MustCompile(`--- FAIL: Benchmark(\S+)`)
)

// parse reads benchmark results.
func parse(r io.Reader) (*results, error) {
	res := &results{}
	byName := map[string]*benchmark{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if m := configLine.FindStringSubmatch(text); m != nil {
			if c := m[1] + ": " + m[2]; !slices.Contains(res.config, c) {
				res.config = append(res.config, c)
			}
			continue
		}
		if m := failLine.FindStringSubmatch(text); m != nil {
			if name := procs.ReplaceAllString(m[1], ""); !slices.Contains(res.failed, name) {
				res.failed = append(res.failed, name)
			}
			continue
		}
		m := resultLine.FindStringSubmatch(text)
		if m == nil {
			continue
		}
		fields := strings.Fields(m[3])
		if len(fields)%2 != 0 {
			return nil, fmt.Errorf("line %d: values and units do not pair up: %q", line, text)
		}
		name := procs.ReplaceAllString(m[1], "")
		b := byName[name]
		if b == nil {
			b = &benchmark{name: name, values: map[string][]float64{}}
			byName[name] = b
			res.benchmarks = append(res.benchmarks, b)
		}
		for i := 0; i < len(fields); i += 2 {
			v, err := strconv.ParseFloat(fields[i], 64)
			if err != nil {
				return nil, fmt.Errorf("line %d: %q is not a number: %q", line, fields[i], text)
			}
			unit := fields[i+1]
			if !slices.Contains(b.units, unit) {
				b.units = append(b.units, unit)
			}
			b.values[unit] = append(b.values[unit], v)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(res.benchmarks) == 0 {
		return nil, errors.New("no benchmark results in the input (run go test with -bench)")
	}
	return res, nil
}

// median returns the median of values; false when there are none.
func median(values []float64) (float64, bool) {
	if len(values) == 0 {
		return 0, false
	}
	s := slices.Clone(values)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2], true
	}
	return (s[n/2-1] + s[n/2]) / 2, true
}

// splitPath returns a benchmark's name without its path= element, and the
// path; path is "" when the name has none.
func splitPath(name string) (rest, path string) {
	parts := strings.Split(name, "/")
	for i, p := range parts {
		if v, ok := strings.CutPrefix(p, pathKey); ok {
			return strings.Join(slices.Delete(parts, i, i+1), "/"), v
		}
	}
	return name, ""
}

// comparison is one row of the first table.
type comparison struct {
	name            string
	local, external *benchmark
}

func comparisons(res *results) []*comparison {
	var out []*comparison
	byName := map[string]*comparison{}
	for _, b := range res.benchmarks {
		rest, path := splitPath(b.name)
		if path != inProcess && path != external {
			continue
		}
		c := byName[rest]
		if c == nil {
			c = &comparison{name: rest}
			byName[rest] = c
			out = append(out, c)
		}
		if path == inProcess {
			c.local = b
		} else {
			c.external = b
		}
	}
	return out
}

func render(w io.Writer, res *results) error {
	bw := bufio.NewWriter(w)
	if len(res.config) > 0 {
		fmt.Fprintf(bw, "%s\n\n", strings.Join(res.config, ", "))
	}
	fmt.Fprintf(bw, "Median of %s per benchmark.\n", runs(res))

	if rows := comparisons(res); len(rows) > 0 {
		fmt.Fprintln(bw)
		fmt.Fprintln(bw, "| benchmark | in-process ns/op | external ns/op | external ÷ in-process | in-process allocs/op | external allocs/op | in-process B/op | external B/op |")
		fmt.Fprintln(bw, "|---|--:|--:|--:|--:|--:|--:|--:|")
		for _, c := range rows {
			fmt.Fprintf(bw, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", c.name,
				cell(c.local, nsPerOp), cell(c.external, nsPerOp), ratio(c.local, c.external),
				cell(c.local, allocsPerOp), cell(c.external, allocsPerOp),
				cell(c.local, bytesPerOp), cell(c.external, bytesPerOp))
		}
	}

	// Every benchmark, with every unit any of them reports: ns/op, the
	// benchmarks' own metrics, then B/op and allocs/op.
	units := []string{nsPerOp}
	for _, b := range res.benchmarks {
		for _, u := range b.units {
			if u != bytesPerOp && u != allocsPerOp && !slices.Contains(units, u) {
				units = append(units, u)
			}
		}
	}
	units = append(units, bytesPerOp, allocsPerOp)
	fmt.Fprintln(bw)
	fmt.Fprintf(bw, "| benchmark | %s |\n", strings.Join(units, " | "))
	fmt.Fprintf(bw, "|---|%s\n", strings.Repeat("--:|", len(units)))
	for _, b := range res.benchmarks {
		cells := make([]string, len(units))
		for i, u := range units {
			cells[i] = cell(b, u)
		}
		fmt.Fprintf(bw, "| %s | %s |\n", b.name, strings.Join(cells, " | "))
	}
	return bw.Flush()
}

// runs says how many runs each benchmark had: "5 runs", "3–5 runs".
func runs(res *results) string {
	lo, hi := math.MaxInt, 0
	for _, b := range res.benchmarks {
		n := 0
		for _, v := range b.values {
			n = max(n, len(v))
		}
		lo, hi = min(lo, n), max(hi, n)
	}
	switch {
	case lo == hi && lo == 1:
		return "1 run"
	case lo == hi:
		return fmt.Sprintf("%d runs", lo)
	default:
		return fmt.Sprintf("%d–%d runs", lo, hi)
	}
}

// cell is the median of a benchmark's unit, or "–".
func cell(b *benchmark, unit string) string {
	if b == nil {
		return "–"
	}
	v, ok := b.median(unit)
	if !ok {
		return "–"
	}
	return number(v)
}

// number formats a value: with a thousands separator, and with one
// decimal below 100, where a fraction matters.
func number(v float64) string {
	if math.Abs(v) < 100 && v != math.Trunc(v) {
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	s := strconv.FormatInt(int64(math.Round(v)), 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var out []byte
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	if neg {
		return "-" + string(out)
	}
	return string(out)
}

// ratio is external ns/op over in-process ns/op.
func ratio(local, ext *benchmark) string {
	if local == nil || ext == nil {
		return "–"
	}
	l, ok1 := local.median(nsPerOp)
	e, ok2 := ext.median(nsPerOp)
	if !ok1 || !ok2 || l == 0 {
		return "–"
	}
	r := e / l
	if r >= 100 {
		return fmt.Sprintf("%.0f×", r)
	}
	return fmt.Sprintf("%.1f×", r)
}
