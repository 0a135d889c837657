//go:build !linux

package wasmtest

import (
	"io/fs"
	"time"
)

// lastUse is when the file was last written.
func lastUse(info fs.FileInfo) time.Time { return info.ModTime() }
