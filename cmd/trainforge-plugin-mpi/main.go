// Command trainforge-plugin-mpi is the MPI plugin of Trainforge, served as
// an external plugin: see package plugins/mpi for what it does.
package main

import (
	"github.com/trainforge/trainforge/plugins/mpi"
	"github.com/trainforge/trainforge/sdk"
)

func main() {
	sdk.Serve(mpi.New())
}
