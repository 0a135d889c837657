// Command kustomize builds a kustomization as `kustomize build DIR` does,
// with the kustomize library that go.mod pins (the one test/install
// checks), so that printing the install needs nothing but Go:
//
//	go run ./hack/kustomize build config/default | kubectl apply --server-side -f -
package main

import (
	"fmt"
	"os"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

func main() {
	if len(os.Args) != 3 || os.Args[1] != "build" {
		fmt.Fprintln(os.Stderr, "usage: kustomize build DIR")
		os.Exit(2)
	}
	res, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), os.Args[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, "kustomize build:", err)
		os.Exit(1)
	}
	out, err := res.AsYaml()
	if err != nil {
		fmt.Fprintln(os.Stderr, "kustomize build:", err)
		os.Exit(1)
	}
	os.Stdout.Write(out)
}
