package remote_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"

	"github.com/trainforge/trainforge/framework"
	"github.com/trainforge/trainforge/framework/remote"
	"github.com/trainforge/trainforge/framework/remote/remotetest"
)

var update = flag.Bool("update", false, "rewrite the messages of remotetest/bad-answers.json from what the host says")

// Every fault of the bad-answers table, in every answer format, gets the
// table's message from the host: the formats share one decoder and one
// set of limits. A refused answer leaves Info as it was.
func TestBadAnswersInEveryFormat(t *testing.T) {
	table, err := remotetest.Load()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i, row := range table.Rows {
		for _, format := range remotetest.Formats {
			a := row.Answers[format]
			t.Run(fmt.Sprintf("%d %s/%s", i, row.Name, format), func(t *testing.T) {
				c := remote.NewClient(&answers{describe: remotetest.Describe("Vendor"), message: remotetest.Response(format, a).(proto.Message)}, table.RemoteLimits())
				info, err := table.NewInfo()
				if err != nil {
					t.Fatal(err)
				}
				got := remotetest.Call(ctx, c, format, info, remotetest.Job(i, format))
				if *update {
					a.Message = got
					return
				}
				if got != a.Message {
					t.Errorf("answer %s\n got: %q\nwant: %q", a.Shown(), got, a.Message)
				}
				if got != "accepted" {
					want, _ := table.NewInfo()
					if diff := cmp.Diff(want, info); diff != "" {
						t.Errorf("a refused answer changed Info (-want +got):\n%s", diff)
					}
				}
			})
		}
	}
	if *update {
		if err := remotetest.Save(table, "../.."); err != nil {
			t.Fatal(err)
		}
	}
}

// A document exactly as deep as maxDepth is taken, one level deeper is
// not: the bound is on levels, the root's included.
func TestDepthBound(t *testing.T) {
	nested := func(levels int) []byte {
		// The root and template are two levels; each "x" one more.
		doc := `{}`
		for range levels - 2 {
			doc = `{"x":` + doc + `}`
		}
		return []byte(`{"version":"v1","podSets":[],"template":` + doc + `}`)
	}
	l := remote.Limits{MaxDepth: 10}
	info := &framework.Info{Version: "v1"}
	if err := remote.ApplyInfoWithin(info, nested(10), l); err != nil {
		t.Errorf("10 levels, maxDepth 10: %v", err)
	}
	err := remote.ApplyInfoWithin(info, nested(11), l)
	var le *remote.LimitError
	if !errors.As(err, &le) || le.Field != remote.FieldMaxDepth {
		t.Errorf("11 levels, maxDepth 10: error %v, want a LimitError of %s", err, remote.FieldMaxDepth)
	}
}
