package procnode

import "testing"

func TestExpand(t *testing.T) {
	env := map[string]string{"A": "alpha", "B": "$(A)", "EMPTY": ""}
	for in, want := range map[string]string{
		"plain":           "plain",
		"$(A)":            "alpha",
		"x$(A)y$(A)":      "xalphayalpha",
		"$(MISSING)":      "$(MISSING)",
		"$$(A)":           "$(A)",
		"$$$(A)":          "$alpha",
		"$$":              "$",
		"$A":              "$A",
		"cost $5":         "cost $5",
		"end$":            "end$",
		"$(A":             "$(A",
		"$()":             "$()",
		"$(EMPTY)x":       "x",
		"$(B)":            "$(A)", // values are not expanded again
		"--port=$(A):$$x": "--port=alpha:$x",
	} {
		if got := expand(in, mapLookup(env)); got != want {
			t.Errorf("expand(%q) = %q, want %q", in, got, want)
		}
	}
}
