// Command trainforge-plugin-volcano serves the Volcano plugin (package
// plugins/volcano) as an external Trainforge plugin.
package main

import (
	"github.com/trainforge/trainforge/plugins/volcano"
	"github.com/trainforge/trainforge/sdk"
)

func main() {
	sdk.Serve(volcano.New())
}
