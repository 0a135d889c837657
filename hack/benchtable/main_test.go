package main

import (
	"bytes"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite testdata/sample.md from testdata/sample.txt")

// TestSample renders a captured run of test/bench (two runs of each
// benchmark, with -benchmem) and compares the tables with
// testdata/sample.md.
func TestSample(t *testing.T) {
	in, err := os.Open(filepath.Join("testdata", "sample.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	res, err := parse(in)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := render(&out, res); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "sample.md")
	if *update {
		if err := os.WriteFile(golden, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), out.String()); diff != "" {
		t.Errorf("output (-%s +got):\n%s", golden, diff)
	}
}

// TestParseSample checks what parse reads from the captured run.
func TestParseSample(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "sample.txt"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := parse(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	wantConfig := []string{
		"goos: linux", "goarch: amd64",
		"pkg: github.com/trainforge/trainforge/test/bench", "cpu: Intel(R) Xeon(R) Processor",
	}
	if diff := cmp.Diff(wantConfig, res.config); diff != "" {
		t.Errorf("config (-want +got):\n%s", diff)
	}
	var names []string
	for _, b := range res.benchmarks {
		names = append(names, b.name)
	}
	wantNames := []string{
		"Call/point=Validate/path=in-process", "Call/point=Validate/path=codec-only", "Call/point=Validate/path=external",
		"Call/point=Build/path=in-process", "Call/point=Build/path=codec-only", "Call/point=Build/path=external",
		"InfoCopy/info=seed-torch",
		"Reconcile/seed=torch/path=in-process", "Reconcile/seed=torch/path=codec-only", "Reconcile/seed=torch/path=external",
		"EmptyCall/path=in-process", "EmptyCall/path=codec-only", "EmptyCall/path=external",
	}
	if diff := cmp.Diff(wantNames, names); diff != "" {
		t.Errorf("benchmarks (-want +got):\n%s", diff)
	}
	ext := res.benchmarks[2]
	if diff := cmp.Diff([]string{"ns/op", "host-cpu-ns/op", "plugin-cpu-ns/op", "B/op", "allocs/op"}, ext.units); diff != "" {
		t.Errorf("units (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]float64{279127, 273089}, ext.values["ns/op"]); diff != "" {
		t.Errorf("ns/op (-want +got):\n%s", diff)
	}
	if m, _ := ext.median("ns/op"); m != 276108 {
		t.Errorf("median ns/op = %v, want 276108", m)
	}
	if m, _ := res.benchmarks[10].median("ns/op"); math.Abs(m-37.725) > 1e-9 {
		t.Errorf("median ns/op of EmptyCall in-process = %v, want 37.725", m)
	}
}

func TestParse(t *testing.T) {
	cases := []struct {
		name    string
		in      string
		want    map[string]map[string][]float64
		wantErr string
	}{
		{
			name: "no GOMAXPROCS suffix, noise around the results",
			in: "some log line\nBenchmarkX/path=in-process \t 10\t 5.5 ns/op\n--- FAIL: BenchmarkY\nPASS\n" +
				"BenchmarkX/path=in-process \t 10\t 6.5 ns/op\nok  \tpkg\t1.0s\n",
			want: map[string]map[string][]float64{"X/path=in-process": {"ns/op": {5.5, 6.5}}},
		},
		{
			name: "GOMAXPROCS suffix stripped, runs of several counts joined",
			in:   "BenchmarkA-2 1 100 ns/op 3 B/op 1 allocs/op\nBenchmarkA-2 1 300 ns/op 3 B/op 1 allocs/op\n",
			want: map[string]map[string][]float64{"A": {"ns/op": {100, 300}, "B/op": {3, 3}, "allocs/op": {1, 1}}},
		},
		{
			name:    "no results",
			in:      "PASS\nok pkg 0.1s\n",
			wantErr: "no benchmark results",
		},
		{
			name:    "a value without its unit",
			in:      "BenchmarkA-2 1 100 ns/op 3\n",
			wantErr: "do not pair up",
		},
		{
			name:    "a unit where a value belongs",
			in:      "BenchmarkA-2 1 ns/op 100\n",
			wantErr: "is not a number",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := parse(strings.NewReader(tc.in))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one saying %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]map[string][]float64{}
			for _, b := range res.benchmarks {
				got[b.name] = b.values
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("values (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseFailedRuns(t *testing.T) {
	// As go test prints a run that fails before its result: the name,
	// then the failure on the same line, and again on a line of its own.
	in := "BenchmarkS/path=external-2 \t 1022\t 2334306 ns/op\n" +
		"BenchmarkS/path=external-2 \t--- FAIL: BenchmarkS/path=external\n" +
		"    bench_test.go:426: no answer within callTimeout 2s\n" +
		"--- FAIL: BenchmarkS/path=external-2\n" +
		"BenchmarkS/path=external-2 \t 4593\t 680080 ns/op\n" +
		"BenchmarkT-2 1 100 ns/op\n"
	res, err := parse(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"S/path=external"}, res.failed); diff != "" {
		t.Errorf("failed (-want +got):\n%s", diff)
	}
	if len(res.benchmarks) != 2 || len(res.benchmarks[0].values["ns/op"]) != 2 {
		t.Errorf("the runs that have a result are not all kept: %+v", res.benchmarks)
	}
}

func TestMedian(t *testing.T) {
	cases := []struct {
		in   []float64
		want float64
		ok   bool
	}{
		{nil, 0, false},
		{[]float64{7}, 7, true},
		{[]float64{9, 1, 5}, 5, true},
		{[]float64{4, 1, 3, 2}, 2.5, true},
		{[]float64{5, 100, 4, 3, 1000}, 5, true},
	}
	for _, tc := range cases {
		got, ok := median(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("median(%v) = %v, %v; want %v, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestSplitPath(t *testing.T) {
	cases := []struct{ in, rest, path string }{
		{"Call/point=Build/path=external", "Call/point=Build", "external"},
		{"Reconcile/path=in-process/seed=torch", "Reconcile/seed=torch", "in-process"},
		{"InfoCopy/info=seed-torch", "InfoCopy/info=seed-torch", ""},
	}
	for _, tc := range cases {
		rest, path := splitPath(tc.in)
		if rest != tc.rest || path != tc.path {
			t.Errorf("splitPath(%q) = %q, %q; want %q, %q", tc.in, rest, path, tc.rest, tc.path)
		}
	}
}

func TestNumber(t *testing.T) {
	cases := map[float64]string{
		0: "0", 37.725: "37.7", 99: "99", 100.4: "100", 1234: "1,234", 1549860: "1,549,860", -1234.6: "-1,235",
	}
	for in, want := range cases {
		if got := number(in); got != want {
			t.Errorf("number(%v) = %q, want %q", in, got, want)
		}
	}
}

// TestComparisonWithOnePath shows "–" where a path is missing.
func TestComparisonWithOnePath(t *testing.T) {
	res, err := parse(strings.NewReader("BenchmarkCall/point=Status/path=external-2 1 500 ns/op 10 B/op 2 allocs/op\n"))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := render(&out, res); err != nil {
		t.Fatal(err)
	}
	want := "| Call/point=Status | – | 500 | – | – | 2 | – | 10 |"
	if !strings.Contains(out.String(), want) {
		t.Errorf("output lacks %q:\n%s", want, out.String())
	}
	if !strings.Contains(out.String(), "Median of 1 run per benchmark.") {
		t.Errorf("output does not say how many runs:\n%s", out.String())
	}
}
