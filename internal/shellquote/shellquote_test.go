package shellquote

import (
	"os/exec"
	"testing"
)

// What the shell reads back is the string itself.
func TestQuoteRoundTrips(t *testing.T) {
	for _, s := range []string{"", "plain", "with space", "it's", `"double" $HOME \ * ; | &`, "new\nline", "''"} {
		out, err := exec.Command("sh", "-c", "printf %s "+Quote(s)).Output()
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		if string(out) != s {
			t.Errorf("sh read %q back as %q", s, out)
		}
	}
}
