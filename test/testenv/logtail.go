package testenv

import "github.com/trainforge/trainforge/internal/logtail"

// LogTailLines is how many lines of a child process's log a failure
// message carries (logtail.Lines).
const LogTailLines = logtail.Lines

// LogTail returns the last n lines of the log at path, or why it cannot
// be read (logtail.File).
func LogTail(path string, n int) string { return logtail.File(path, n) }

// Tail returns the last n lines of text, or "(empty)" (logtail.Text).
func Tail(text string, n int) string { return logtail.Text(text, n) }

// LogCrash returns the lines of the log at path that say why a Go program
// crashed, or "" (logtail.Crash).
func LogCrash(path string) string { return logtail.Crash(path) }
