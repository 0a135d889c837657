// Command trainforge-plugin-flux is the Flux plugin of Trainforge, served
// as an external plugin: see package plugins/flux for what it does.
package main

import (
	"github.com/trainforge/trainforge/plugins/flux"
	"github.com/trainforge/trainforge/sdk"
)

func main() {
	sdk.Serve(flux.New())
}
