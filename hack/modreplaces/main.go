// Command modreplaces reads a module's go.mod and prints what a module that
// requires it needs to build it as its own release does (the build
// scripts of hack/ use it):
//
//	modreplaces flags GOMOD [STAGING_VERSION]
//	    one -replace=OLD=NEW@VERSION flag per replace directive of GOMOD, for
//	    `go mod edit`: a dependent module ignores its dependencies' replace
//	    directives. A replacement by a local path (k8s.io/kubernetes's
//	    ./staging/src/k8s.io/api, ...) becomes the module itself at
//	    STAGING_VERSION, or is left out without one.
//	modreplaces version GOMOD MODULE
//	    the version GOMOD replaces MODULE with, or nothing.
package main

import (
	"fmt"
	"os"
	"strings"

	"golang.org/x/mod/modfile"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "modreplaces:", err)
		os.Exit(2)
	}
}

func run(args []string) error {
	if len(args) < 2 {
		return fmt.Errorf("usage: modreplaces flags GOMOD [STAGING_VERSION] | modreplaces version GOMOD MODULE")
	}
	data, err := os.ReadFile(args[1])
	if err != nil {
		return err
	}
	f, err := modfile.Parse(args[1], data, nil)
	if err != nil {
		return err
	}
	switch args[0] {
	case "flags":
		staging := ""
		if len(args) > 2 {
			staging = args[2]
		}
		for _, r := range f.Replace {
			old := r.Old.Path
			if r.Old.Version != "" {
				old += "@" + r.Old.Version
			}
			switch {
			case !strings.HasPrefix(r.New.Path, "."):
				fmt.Printf("-replace=%s=%s@%s\n", old, r.New.Path, r.New.Version)
			case staging != "":
				fmt.Printf("-replace=%s=%s@%s\n", old, r.Old.Path, staging)
			}
		}
	case "version":
		if len(args) != 3 {
			return fmt.Errorf("usage: modreplaces version GOMOD MODULE")
		}
		for _, r := range f.Replace {
			if r.Old.Path == args[2] && !strings.HasPrefix(r.New.Path, ".") {
				fmt.Println(r.New.Version)
			}
		}
	default:
		return fmt.Errorf("unknown command %q: want flags or version", args[0])
	}
	return nil
}
