package wasmtest

import (
	"io/fs"
	"syscall"
	"time"
)

// lastUse is when the file was last read or written: its access time
// where the file system keeps one (relatime updates it at least daily).
func lastUse(info fs.FileInfo) time.Time {
	used := info.ModTime()
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		if a := time.Unix(st.Atim.Unix()); a.After(used) {
			used = a
		}
	}
	return used
}
