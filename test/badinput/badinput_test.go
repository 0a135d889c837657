// Package badinput checks that every bad input a user can give Trainforge
// gets a clear answer: the exact message each one gets, through the real
// code path (the webhook's validators, the controller's reconciler, the
// configuration loader and the plugin host, the host's decoding of plugin
// answers, the commands' flags). The rows are in rows_test.go; the table
// of docs/bad-input.md is generated from them, and this test fails when
// the doc is stale: run `make test-badinput UPDATE=1` to refresh it.
package badinput

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trainforge/trainforge/test/testenv"
)

var update = flag.Bool("update", false, "rewrite the table of docs/bad-input.md from the rows")

// docPath is the user's copy of the table.
const docPath = "../../docs/bad-input.md"

// The generated part of the doc lies between these lines.
const (
	beginMarker = "<!-- BEGIN GENERATED TABLE: make test-badinput UPDATE=1 -->"
	endMarker   = "<!-- END GENERATED TABLE -->"
)

// row is one bad input and the exact message it gets.
type row struct {
	// Input is what the user gives, shown in the doc (Markdown).
	Input string
	// Message is the exact message; paths of temporary files are shown as
	// the paths the doc's intro names.
	Message string
	// got runs the input through the real code path and returns its
	// message.
	got func(t *testing.T) string
}

// area is a group of rows that share a code path.
type area struct {
	Title string
	// Where says where the message shows up.
	Where string
	Rows  []row
}

// binaries are what the command rows run, built once per test run (or
// taken from TRAINFORGE_TEST_BIN, which make test-badinput sets); binDir
// is their directory.
var (
	binaries = testenv.NewBinaries(
		"cmd/trainforge-controller",
		"cmd/trainforge-plugin-conformance",
		"test/plugins/faulty")
	binDir string
)

func TestMain(m *testing.M) {
	flag.Parse()
	dir, err := binaries.Dir()
	if err != nil {
		fmt.Fprintln(os.Stderr, "building the binaries:", err)
		binaries.Cleanup()
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	stopAPIServer()
	binaries.Cleanup()
	os.Exit(code)
}

func TestBadInputGetsItsMessage(t *testing.T) {
	for _, a := range areas() {
		for i, r := range a.Rows {
			t.Run(fmt.Sprintf("%s/%d", a.Title, i+1), func(t *testing.T) {
				got := r.got(t)
				if got != r.Message {
					t.Errorf("input %s\n got: %q\nwant: %q", r.Input, got, r.Message)
				}
			})
		}
	}
}

func TestTableHasAtLeast40Rows(t *testing.T) {
	n := 0
	for _, a := range areas() {
		n += len(a.Rows)
	}
	if n < 40 {
		t.Errorf("%d rows, want at least 40", n)
	}
}

// TestDocIsGenerated fails when docs/bad-input.md's table is not the one
// the rows make, and rewrites it with -update.
func TestDocIsGenerated(t *testing.T) {
	doc, err := os.ReadFile(docPath)
	if err != nil {
		t.Fatal(err)
	}
	begin := bytes.Index(doc, []byte(beginMarker))
	end := bytes.Index(doc, []byte(endMarker))
	if begin < 0 || end < begin {
		t.Fatalf("%s lacks the lines %q and %q around the table", docPath, beginMarker, endMarker)
	}
	want := string(doc[:begin+len(beginMarker)]) + "\n" + renderTable(areas()) + string(doc[end:])
	if want == string(doc) {
		return
	}
	if *update {
		if err := os.WriteFile(docPath, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s is stale: run `make test-badinput UPDATE=1` and commit it", filepath.Base(docPath))
}

func renderTable(areas []area) string {
	var b strings.Builder
	n := 0
	for _, a := range areas {
		fmt.Fprintf(&b, "\n### %s\n\n%s\n\n| # | Bad input | Message |\n|---|---|---|\n", a.Title, a.Where)
		for _, r := range a.Rows {
			n++
			fmt.Fprintf(&b, "| %d | %s | %s |\n", n, cell(r.Input), codeCell(r.Message))
		}
	}
	b.WriteString("\n")
	return b.String()
}

// cell makes Markdown fit one table cell.
func cell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.ReplaceAll(s, "\n", "<br>")
}

// codeCell shows a message verbatim, as code, in one cell.
func codeCell(s string) string {
	fence := "`"
	if strings.Contains(s, "`") {
		fence = "``"
	}
	pad := ""
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		pad = " "
	}
	return cell(fence + pad + s + pad + fence)
}
