// Command trainforge-plugin-jax is the JAX plugin of Trainforge (package
// plugins/jax) as a program of its own: the controller starts it when its
// configuration file enables the plugin, for example
//
//	plugins:
//	- name: JAX
//	  external:
//	    command: /plugins/trainforge-plugin-jax
//
// Run by hand, it says so and exits with status 1.
package main

import (
	"github.com/trainforge/trainforge/plugins/jax"
	"github.com/trainforge/trainforge/sdk"
)

func main() {
	sdk.Serve(jax.New())
}
