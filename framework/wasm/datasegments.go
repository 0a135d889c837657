package wasm

import (
	"cmp"
	"encoding/binary"
	"slices"
)

// Go's linker writes a module's static data as up to 100,000 active data
// segments, cut wherever a few zero bytes lie between two values. wazero
// keeps each segment as a Go value in the compiled module and, at every
// instance's start, evaluates its offset, copies it and keeps a slice of it
// per instance: for a vendor plugin's module, 100,000 segments cost about
// 8 MiB in the loaded module, 2.4 MiB of heap per instance and most of an
// instance's start. A module is run as it is packed: the active segments
// merged where at most maxDataGap bytes lie between them, the gaps filled
// with the zeros memory starts with, so that a few dozen segments write the
// same bytes to the same addresses.

// maxDataGap is the widest gap two data segments are merged across: wide
// enough to join Go's segments (nearly all of its gaps are under 64 bytes)
// and narrow enough that the zeros it adds stay in pages the data touches
// anyway.
const maxDataGap = 256

// Section ids of the WebAssembly binary format, which readSections
// reads, for every rewrite of a module the host makes.
const (
	sectionCustom    = 0
	sectionType      = 1
	sectionImport    = 2
	sectionFunction  = 3
	sectionMemory    = 5
	sectionGlobal    = 6
	sectionExport    = 7
	sectionStart     = 8
	sectionCode      = 10
	sectionData      = 11
	sectionDataCount = 12
)

// Opcodes that packing reads.
const (
	opI32Const = 0x41
	opEnd      = 0x0b
)

// dataSegment is an active data segment of memory 0 at a constant offset.
type dataSegment struct {
	offset uint32
	init   []byte
}

// PackDataSegments returns bin with its active data segments merged
// (above), or bin itself when it has nothing to merge or its data is not
// only what packing can rewrite without changing what the module does:
// active segments of memory 0 at i32.const offsets that do not overlap,
// and no data count section (whose presence allows memory.init and
// data.drop, which name segments by index). Packing never fails: what it
// cannot read it leaves to wazero, which says what is wrong. The host
// compiles every module so; it is exported for the benchmarks, which
// compile a module as the host does.
func PackDataSegments(bin []byte) []byte {
	head, start, end, ok := findDataSection(bin)
	if !ok {
		return bin
	}
	segs, ok := readDataSegments(bin[start:end])
	if !ok {
		return bin
	}
	merged := mergeDataSegments(segs)
	if len(merged) == len(segs) {
		return bin
	}
	section := appendDataSection(nil, merged)
	out := make([]byte, 0, head+1+binary.MaxVarintLen64+len(section)+len(bin)-end)
	out = append(out, bin[:head]...)
	out = append(out, sectionData)
	out = binary.AppendUvarint(out, uint64(len(section)))
	out = append(out, section...)
	return append(out, bin[end:]...)
}

// findDataSection finds the data section of module bin: head is where the
// section starts (its id), its contents are bin[start:end]. It is not ok
// when bin is not a module it can read, has no data section, or has a data
// count section (whose presence allows memory.init and data.drop, which
// name segments by index).
func findDataSection(bin []byte) (head, start, end int, ok bool) {
	sections, ok := readSections(bin)
	if !ok {
		return 0, 0, 0, false
	}
	found := false
	for _, s := range sections {
		switch s.id {
		case sectionDataCount:
			return 0, 0, 0, false
		case sectionData:
			head, start, end, found = s.head, s.start, s.end, true
		}
	}
	return head, start, end, found
}

// section is a section of a module: its id at bin[head], its contents
// bin[start:end].
type section struct {
	id               byte
	head, start, end int
}

// readSections reads the sections of module bin; it is not ok when bin is
// not a module or a section's size runs past its end.
func readSections(bin []byte) ([]section, bool) {
	if len(bin) < 8 || string(bin[:4]) != "\x00asm" {
		return nil, false
	}
	var sections []section
	for p := 8; p < len(bin); {
		size, n := binary.Uvarint(bin[p+1:])
		if n <= 0 || size > uint64(len(bin)-p-1-n) {
			return nil, false
		}
		sections = append(sections, section{id: bin[p], head: p, start: p + 1 + n, end: p + 1 + n + int(size)})
		p += 1 + n + int(size)
	}
	return sections, true
}

// readDataSegments reads a data section's segments, sorted by offset; it
// is not ok when they are not only active segments of memory 0 at
// i32.const offsets that do not overlap.
func readDataSegments(data []byte) ([]dataSegment, bool) {
	count, n := binary.Uvarint(data)
	if n <= 0 || count > uint64(len(data)) {
		return nil, false
	}
	p := n
	segs := make([]dataSegment, 0, count)
	for range count {
		// Flag 0: active, memory 0, an offset expression. Passive
		// segments (1) and other memories (2) are left alone.
		if p+2 > len(data) || data[p] != 0 || data[p+1] != opI32Const {
			return nil, false
		}
		p += 2
		offset, n := readSLEB32(data[p:])
		if n <= 0 || p+n >= len(data) || data[p+n] != opEnd {
			return nil, false
		}
		p += n + 1
		size, n := binary.Uvarint(data[p:])
		if n <= 0 || size > uint64(len(data)-p-n) {
			return nil, false
		}
		p += n
		segs = append(segs, dataSegment{offset: uint32(offset), init: data[p : p+int(size)]})
		p += int(size)
	}
	if p != len(data) {
		return nil, false
	}
	// Active segments are written in order, a later one over an earlier
	// one: only segments that do not overlap may be reordered.
	slices.SortStableFunc(segs, func(a, b dataSegment) int { return cmp.Compare(a.offset, b.offset) })
	for i := 1; i < len(segs); i++ {
		if uint64(segs[i].offset) < segmentEnd(segs[i-1]) {
			return nil, false
		}
	}
	return segs, true
}

func segmentEnd(s dataSegment) uint64 { return uint64(s.offset) + uint64(len(s.init)) }

// mergeDataSegments merges sorted, disjoint segments across gaps of at
// most maxDataGap bytes.
func mergeDataSegments(segs []dataSegment) []dataSegment {
	var out []dataSegment
	for i := 0; i < len(segs); {
		j := i + 1
		for j < len(segs) && uint64(segs[j].offset)-segmentEnd(segs[j-1]) <= maxDataGap {
			j++
		}
		if j == i+1 {
			out = append(out, segs[i])
			i = j
			continue
		}
		init := make([]byte, segmentEnd(segs[j-1])-uint64(segs[i].offset))
		for _, s := range segs[i:j] {
			copy(init[s.offset-segs[i].offset:], s.init)
		}
		out = append(out, dataSegment{offset: segs[i].offset, init: init})
		i = j
	}
	return out
}

// appendDataSection appends the contents of a data section of segs.
func appendDataSection(b []byte, segs []dataSegment) []byte {
	b = binary.AppendUvarint(b, uint64(len(segs)))
	for _, s := range segs {
		b = append(b, 0, opI32Const)
		b = appendSLEB32(b, int32(s.offset))
		b = append(b, opEnd)
		b = binary.AppendUvarint(b, uint64(len(s.init)))
		b = append(b, s.init...)
	}
	return b
}

// readSLEB32 reads a signed LEB128 of at most 32 bits; n <= 0 when b does
// not start with one.
func readSLEB32(b []byte) (v int32, n int) {
	var x int64
	var shift uint
	for n < len(b) && n < 5 {
		c := b[n]
		n++
		x |= int64(c&0x7f) << shift
		shift += 7
		if c&0x80 == 0 {
			if c&0x40 != 0 {
				x |= -1 << shift
			}
			if x < -1<<31 || x > 1<<31-1 {
				return 0, 0
			}
			return int32(x), n
		}
	}
	return 0, 0
}

// appendSLEB32 appends v as a signed LEB128.
func appendSLEB32(b []byte, v int32) []byte {
	x := int64(v)
	for {
		c := byte(x & 0x7f)
		x >>= 7
		if (x == 0 && c&0x40 == 0) || (x == -1 && c&0x40 != 0) {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}
