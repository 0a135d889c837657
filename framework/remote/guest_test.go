package remote

import (
	"bytes"
	"context"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"reflect"
	"strings"
	"testing"

	"google.golang.org/grpc/status"

	pluginv1 "github.com/trainforge/trainforge/proto/trainforge/plugin/v1"
)

// TestGuestServiceMatchesGRPC holds service_wasip1.go, the hand-written
// stand-in for the gRPC stubs in a WebAssembly guest, to
// plugin_grpc.pb.go: the same methods of PluginServiceServer with the same
// signatures, and the same UNIMPLEMENTED answers. It fails when the
// service changes in plugin.proto and the stand-in was not changed with
// it.
func TestGuestServiceMatchesGRPC(t *testing.T) {
	const path = "../../proto/trainforge/plugin/v1/service_wasip1.go"
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	guest := map[string]string{}
	unimplemented := map[string]string{}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.TypeSpec:
			if it, ok := n.Type.(*ast.InterfaceType); ok && n.Name.Name == "PluginServiceServer" {
				for _, m := range it.Methods.List {
					var b bytes.Buffer
					if err := printer.Fprint(&b, fset, m.Type); err != nil {
						t.Fatal(err)
					}
					guest[m.Names[0].Name] = b.String()
				}
			}
		case *ast.FuncDecl:
			if n.Recv != nil && len(n.Body.List) > 0 {
				ast.Inspect(n.Body, func(n2 ast.Node) bool {
					if lit, ok := n2.(*ast.BasicLit); ok && lit.Kind == token.STRING {
						unimplemented[n.Name.Name] = strings.Trim(lit.Value, `"`)
					}
					return true
				})
			}
		}
		return true
	})

	grpcType := reflect.TypeFor[pluginv1.PluginServiceServer]()
	if len(guest) != grpcType.NumMethod() {
		t.Errorf("%s's PluginServiceServer has %d methods, plugin_grpc.pb.go's %d", path, len(guest), grpcType.NumMethod())
	}
	impl := reflect.ValueOf(pluginv1.UnimplementedPluginServiceServer{})
	for i := range grpcType.NumMethod() {
		m := grpcType.Method(i)
		want := strings.ReplaceAll(m.Type.String(), "pluginv1.", "")
		if got, ok := guest[m.Name]; !ok {
			t.Errorf("%s: PluginServiceServer has no method %s %s", path, m.Name, want)
		} else if got != want {
			t.Errorf("%s: PluginServiceServer.%s is %s, plugin_grpc.pb.go's %s", path, m.Name, got, want)
		}
		if !m.IsExported() {
			continue
		}
		// The gRPC stub's answer, to compare with the stand-in's.
		out := impl.MethodByName(m.Name).Call([]reflect.Value{reflect.ValueOf(context.Background()), reflect.New(m.Type.In(1).Elem())})
		want = status.Convert(out[1].Interface().(error)).Message()
		if got := unimplemented[m.Name]; got != want {
			t.Errorf("%s: UnimplementedPluginServiceServer.%s answers %q, plugin_grpc.pb.go's %q", path, m.Name, got, want)
		}
	}
}
