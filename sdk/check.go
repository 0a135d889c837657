package sdk

import (
	"fmt"
	"io"

	"github.com/trainforge/trainforge/framework"
)

// checkPlugin returns 0 when p can be served, else writes why not to w and
// returns the exit status.
func checkPlugin(p framework.Plugin, w io.Writer) int {
	if p == nil {
		fmt.Fprintln(w, "sdk.Serve: the plugin is nil; pass the plugin to serve")
		return 1
	}
	if p.Describe().Name == "" {
		fmt.Fprintln(w, "sdk.Serve: the plugin's Describe gives no name; set Description.Name to the name the configuration file gives the plugin")
		return 1
	}
	return 0
}
