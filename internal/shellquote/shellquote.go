// Package shellquote quotes a string as one word of a POSIX shell command
// line, for the scripts the simulated cluster and the load harness hand to
// sh and bash (mount scripts, a wrapped controller's command).
package shellquote

import "strings"

// Quote returns s in single quotes; each single quote in s ends the
// quoting, is written escaped, and starts it again. The shell reads the
// word back as s, whatever it holds.
func Quote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
