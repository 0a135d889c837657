// Command trainforge-plugin-xgboost is the XGBoost plugin of Trainforge
// (package plugins/xgboost) as a program of its own: the controller starts
// it when its configuration file enables the plugin, for example
//
//	plugins:
//	- name: XGBoost
//	  external:
//	    command: /plugins/trainforge-plugin-xgboost
//
// Run by hand, it says so and exits with status 1.
package main

import (
	"github.com/trainforge/trainforge/plugins/xgboost"
	"github.com/trainforge/trainforge/sdk"
)

func main() {
	sdk.Serve(xgboost.New())
}
