package simcluster

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Lock is held by whoever runs a simulated cluster of a given name, so
// that a second run says so at once instead of failing later on a port or
// a cluster that exists. It is an flock(2): the kernel releases it when its
// holder exits, however it exits. Release removes the file.
type Lock struct {
	f *os.File
}

// ErrLocked is returned by TryLock when another process holds the lock.
// Its message says who holds it.
type ErrLocked struct {
	Path   string
	Holder string
}

func (e *ErrLocked) Error() string {
	return fmt.Sprintf("%s is held by %s", e.Path, e.Holder)
}

// LockPath is where the lock of the cluster name lives.
func LockPath(name string) string {
	return filepath.Join(os.TempDir(), name+".lock")
}

// TryLock takes the lock of the cluster name without waiting, and records
// info (what the holder wants a second run to be told) in it.
func TryLock(name, info string) (*Lock, error) {
	path := LockPath(name)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening the lock file %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		data, _ := os.ReadFile(path)
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			holder := strings.TrimSpace(string(data))
			if holder == "" {
				holder = "another process"
			}
			return nil, &ErrLocked{Path: path, Holder: holder}
		}
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	// A holder that released meanwhile removed the file we locked: lock
	// the one at the path now.
	if !samePath(f, path) {
		f.Close()
		return TryLock(name, info)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(info+"\n"), 0)
	}
	return &Lock{f: f}, nil
}

// Update replaces what a second run is told about the holder.
func (l *Lock) Update(info string) {
	if l == nil || l.f == nil {
		return
	}
	if err := l.f.Truncate(0); err == nil {
		_, _ = l.f.WriteAt([]byte(info+"\n"), 0)
	}
}

// Release gives the lock up.
func (l *Lock) Release() {
	if l == nil || l.f == nil {
		return
	}
	_ = os.Remove(l.f.Name())
	_ = syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
	l.f.Close()
	l.f = nil
}

// samePath reports whether f is the file at path.
func samePath(f *os.File, path string) bool {
	a, err := f.Stat()
	if err != nil {
		return false
	}
	b, err := os.Stat(path)
	return err == nil && os.SameFile(a, b)
}
