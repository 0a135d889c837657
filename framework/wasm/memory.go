package wasm

// heapMemory is a linear memory on the Go heap, grown as wazero grows its
// own: a new slice when the capacity runs out.
type heapMemory struct {
	buf   []byte
	limit uint64
}

func (m *heapMemory) Reallocate(size uint64) []byte {
	switch {
	case size > m.limit:
		return nil
	case size <= uint64(cap(m.buf)):
		m.buf = m.buf[:size]
	default:
		m.buf = append(m.buf[:cap(m.buf)], make([]byte, size-uint64(cap(m.buf)))...)
	}
	return m.buf
}

func (m *heapMemory) Free() { m.buf = nil }
