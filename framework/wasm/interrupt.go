package wasm

import (
	"encoding/binary"
	"strconv"
	"strings"
)

// A call that loops must be stopped at its deadline, and machine code is
// not preempted: it has to check whether to stop. wazero's own check
// (WithCloseOnContextDone) leaves the machine code for Go at every loop
// header to ask, and a Go guest runs one loop per function (its resume
// points): about two thirds of a call's time went there
// (docs/benchmarks.md). So the host writes a cheaper check into the
// module: at every loop header, and at the entry of every function that
// does not begin with a loop (recursion without loops stops too), the code
// counts down a global, and only every yieldEvery checks calls a function
// the host adds, which leaves for Go (memory.grow by 0 pages, which wazero
// serves in Go) and traps once the host has set the interruption global.
// Leaving for Go is what keeps the process alive beside a looping guest:
// there the thread can be preempted, so the garbage collector's stops and
// the timer that sets the interruption global run, which they could not
// while every P runs a guest's machine code.

// InterruptExport is the name under which an instrumented module exports
// the global that interrupts it: 0 while a call may run, 1 once it must
// stop. A module that exports a name under hostExportPrefix already is
// not instrumented.
const InterruptExport = hostExportPrefix + "interrupt"

// hostExportPrefix starts the names of what the host's rewrite exports:
// the interruption global, and each mutable global of the module's own as
// hostExportPrefix + "global." + its index, which a snapshot of an
// instance saves and restores (snapshot.go).
const hostExportPrefix = "trainforge."

// yieldEvery is how many loop headers and function entries a guest passes
// between two of its visits to Go: a visit costs about what wazero's check
// cost at each, and a thousand take a looping guest a few microseconds.
const yieldEvery = 1000

// moduleCounts are what instrumentInterrupt reads of a module before it
// adds to it: the indices of what it adds come after them.
type moduleCounts struct {
	types, funcs, globals uint64 // imported and defined
	memory                bool   // it imports or defines a memory
	emptyType             int64  // the index of a type () -> (); -1: none
	// mutable are the indices of the module's own mutable globals of a
	// number type (i32, i64, f32, f64), which the rewrite exports.
	mutable []uint32
	// unsaved is true when an instance holds state that is neither its
	// memory nor those globals: an imported mutable global, a mutable
	// global of a reference type, or a table its code writes.
	unsaved bool
}

// instrumented is a module with the interruption check written into it.
type instrumented struct {
	bin []byte
	// globals are the names under which bin exports the module's own
	// mutable globals; restorable is true when they and the memory are
	// all the state of an instance (moduleCounts.unsaved), so that an
	// instance can be saved and others started from the save.
	globals    []string
	restorable bool
}

// instrumentInterrupt returns module bin with the checks (above) in every
// function, the function they call, and their two globals, the
// interruption global exported as InterruptExport, and the module's own
// mutable globals exported too (instrumented.globals). It is not ok when bin
// is not a module it can read fully (instructions of proposals past
// WebAssembly 2.0's scalar ones, such as SIMD or threads, included), has
// a start function, no memory, or no type, function, global, export or
// code section, or
// names a global or function past its own: such a module would reach the
// added ones. Then the host compiles the module as it is, with wazero's
// own check.
func instrumentInterrupt(bin []byte) (instrumented, bool) {
	sections, ok := readSections(bin)
	if !ok {
		return instrumented{}, false
	}
	c := moduleCounts{emptyType: -1}
	var have [sectionCode + 1]bool
	for _, s := range sections {
		body := bin[s.start:s.end]
		switch s.id {
		case sectionType:
			if !c.readTypes(body) {
				return instrumented{}, false
			}
		case sectionImport:
			if !c.readImports(body) {
				return instrumented{}, false
			}
		case sectionFunction:
			n, k := binary.Uvarint(body)
			if k <= 0 {
				return instrumented{}, false
			}
			c.funcs += n
		case sectionMemory:
			c.memory = true
		case sectionGlobal:
			if !c.readGlobals(body) {
				return instrumented{}, false
			}
		case sectionExport:
			if exportsPrefix(body, hostExportPrefix) {
				return instrumented{}, false
			}
		case sectionStart:
			// It runs as the module is instantiated, before the host can
			// set an instance's interruption global.
			return instrumented{}, false
		}
		if s.id <= sectionCode {
			have[s.id] = true
		}
	}
	for _, id := range []byte{sectionType, sectionFunction, sectionGlobal, sectionExport, sectionCode} {
		if !have[id] {
			return instrumented{}, false
		}
	}
	if !c.memory || c.globals+2 >= 1<<32 || c.funcs+1 >= 1<<32 || c.types+1 >= 1<<32 {
		return instrumented{}, false
	}
	counter, interrupt := uint32(c.globals), uint32(c.globals+1)
	yield := uint32(c.funcs)
	yieldType := uint32(c.types)
	if c.emptyType >= 0 {
		yieldType = uint32(c.emptyType)
	}

	// At every check: if the counter is 0, call yield; count down.
	check := []byte{0x23}
	check = binary.AppendUvarint(check, uint64(counter))
	check = append(check, 0x45, 0x04, 0x40, 0x10) // i32.eqz; if; call
	check = binary.AppendUvarint(check, uint64(yield))
	check = append(check, 0x0b, 0x23) // end; global.get
	check = binary.AppendUvarint(check, uint64(counter))
	check = append(check, 0x41, 0x01, 0x6b, 0x24) // i32.const 1; i32.sub; global.set
	check = binary.AppendUvarint(check, uint64(counter))

	// yield: memory.grow 0 (Go's turn); trap if interrupted; reset the
	// counter.
	yieldBody := []byte{0x00, 0x41, 0x00, 0x40, 0x00, 0x1a, 0x23} // no locals; i32.const 0; memory.grow 0; drop; global.get
	yieldBody = binary.AppendUvarint(yieldBody, uint64(interrupt))
	yieldBody = append(yieldBody, 0x04, 0x40, 0x00, 0x0b, 0x41) // if; unreachable; end; i32.const
	yieldBody = appendSLEB32(yieldBody, yieldEvery)
	yieldBody = append(yieldBody, 0x24) // global.set
	yieldBody = binary.AppendUvarint(yieldBody, uint64(counter))
	yieldBody = append(yieldBody, 0x0b)

	globals := make([]string, len(c.mutable))
	for i, g := range c.mutable {
		globals[i] = hostExportPrefix + "global." + strconv.FormatUint(uint64(g), 10)
	}

	out := make([]byte, 0, len(bin)+len(bin)/8)
	out = append(out, bin[:8]...)
	for _, s := range sections {
		body := bin[s.start:s.end]
		switch s.id {
		case sectionCustom:
			// DWARF names offsets in the code section, which the checks
			// move: wrong lines in a trap's stack are worse than none.
			if name, ok := customSectionName(body); ok && strings.HasPrefix(name, ".debug_") {
				continue
			}
		case sectionType:
			if c.emptyType < 0 {
				body = appendVecItems(body, 1, func(b []byte) []byte { return append(b, 0x60, 0, 0) })
			}
		case sectionFunction:
			body = appendVecItems(body, 1, func(b []byte) []byte { return binary.AppendUvarint(b, uint64(yieldType)) })
		case sectionGlobal:
			body = appendVecItems(body, 2, func(b []byte) []byte {
				b = append(b, 0x7f, 0x01, 0x41) // the counter: mut i32, yieldEvery
				b = appendSLEB32(b, yieldEvery)
				b = append(b, 0x0b)
				return append(b, 0x7f, 0x01, 0x41, 0x00, 0x0b) // the interruption: mut i32, 0
			})
		case sectionExport:
			body = appendVecItems(body, uint64(1+len(c.mutable)), func(b []byte) []byte {
				b = appendGlobalExport(b, InterruptExport, interrupt)
				for i, g := range c.mutable {
					b = appendGlobalExport(b, globals[i], g)
				}
				return b
			})
		case sectionCode:
			var writesTable bool
			body, writesTable, ok = instrumentCode(body, c, check, yieldBody)
			if !ok {
				return instrumented{}, false
			}
			c.unsaved = c.unsaved || writesTable
		}
		if body == nil {
			return instrumented{}, false
		}
		out = append(out, s.id)
		out = binary.AppendUvarint(out, uint64(len(body)))
		out = append(out, body...)
	}
	return instrumented{bin: out, globals: globals, restorable: !c.unsaved}, true
}

// appendGlobalExport appends the export of global index under name.
func appendGlobalExport(b []byte, name string, index uint32) []byte {
	b = binary.AppendUvarint(b, uint64(len(name)))
	b = append(b, name...)
	b = append(b, 0x03) // a global
	return binary.AppendUvarint(b, uint64(index))
}

// readTypes counts a type section's types and finds () -> () among them.
func (c *moduleCounts) readTypes(body []byte) bool {
	r := reader{b: body, ok: true}
	n := r.u32()
	for i := uint32(0); i < n && r.ok; i++ {
		if r.byte() != 0x60 { // only function types
			return false
		}
		params := r.u32()
		r.skip(int(params))
		results := r.u32()
		r.skip(int(results))
		if params == 0 && results == 0 && c.emptyType < 0 {
			c.emptyType = int64(c.types + uint64(i))
		}
	}
	c.types += uint64(n)
	return r.ok && r.p == len(body)
}

// readImports counts what an import section imports.
func (c *moduleCounts) readImports(body []byte) bool {
	r := reader{b: body, ok: true}
	count := r.u32()
	for i := uint32(0); i < count && r.ok; i++ {
		r.name()
		r.name()
		switch r.byte() {
		case 0x00: // a function: its type
			r.u32()
			c.funcs++
		case 0x01: // a table: its reference type and limits
			r.byte()
			r.limits()
		case 0x02: // a memory
			r.limits()
			c.memory = true
		case 0x03: // a global: its type and mutability
			r.byte()
			if r.byte() != 0 {
				c.unsaved = true // its value is the importer's
			}
			c.globals++
		default:
			return false
		}
	}
	return r.ok && r.p == len(body)
}

// readGlobals reads a global section: it counts the globals and notes
// the mutable ones.
func (c *moduleCounts) readGlobals(body []byte) bool {
	r := reader{b: body, ok: true}
	n := r.u32()
	for i := uint32(0); i < n && r.ok; i++ {
		index := c.globals
		typ, mut := r.byte(), r.byte()
		switch {
		case mut > 1:
			return false
		case mut == 1 && typ >= 0x7c && typ <= 0x7f: // f64, f32, i64, i32
			c.mutable = append(c.mutable, uint32(index))
		case mut == 1:
			c.unsaved = true // a reference: an instance's own function or host value
		}
		// Its initial value: a constant expression, which may read the
		// globals before it only.
		for r.ok {
			op := r.byte()
			if op == opEnd {
				break
			}
			if !r.skipImmediates(op, *c) {
				return false
			}
		}
		c.globals++
	}
	return r.ok && r.p == len(body)
}

// appendVecItems returns a copy of a vector's encoding (its count, then
// its items) with more items, which add appends; nil when vec is no
// vector.
func appendVecItems(vec []byte, more uint64, add func([]byte) []byte) []byte {
	n, k := binary.Uvarint(vec)
	if k <= 0 {
		return nil
	}
	b := binary.AppendUvarint(make([]byte, 0, len(vec)+32), n+more)
	return add(append(b, vec[k:]...))
}

// customSectionName returns the name a custom section starts with.
func customSectionName(body []byte) (string, bool) {
	n, k := binary.Uvarint(body)
	if k <= 0 || n > uint64(len(body)-k) {
		return "", false
	}
	return string(body[k : k+int(n)]), true
}

// exportsPrefix reports whether an export section exports a name that
// starts with prefix.
func exportsPrefix(body []byte, prefix string) bool {
	r := reader{b: body, ok: true}
	count := r.u32()
	for i := uint32(0); i < count && r.ok; i++ {
		if strings.HasPrefix(r.name(), prefix) {
			return true
		}
		r.byte()
		r.u32()
	}
	return false
}

// instrumentCode returns a code section with check at every loop header
// and at the entry of every function whose body does not start with a
// loop, and one more function, of body added, at its end; writesTable is
// true when a function writes a table.
func instrumentCode(body []byte, c moduleCounts, check, added []byte) (out []byte, writesTable, ok bool) {
	r := reader{b: body, ok: true}
	count := r.u32()
	out = binary.AppendUvarint(make([]byte, 0, len(body)+len(body)/4), uint64(count)+1)
	var fn []byte
	for i := uint32(0); i < count && r.ok; i++ {
		size := r.u32()
		if !r.ok || uint64(size) > uint64(len(r.b)-r.p) {
			return nil, false, false
		}
		var writes bool
		fn, writes, ok = instrumentFunction(fn[:0], r.b[r.p:r.p+int(size)], c, check)
		if !ok {
			return nil, false, false
		}
		writesTable = writesTable || writes
		r.p += int(size)
		out = binary.AppendUvarint(out, uint64(len(fn)))
		out = append(out, fn...)
	}
	out = binary.AppendUvarint(out, uint64(len(added)))
	out = append(out, added...)
	return out, writesTable, r.ok && r.p == len(body)
}

// instrumentFunction appends to out function body fn (its locals, then
// its instructions) with the checks; writesTable is true when fn writes
// a table.
func instrumentFunction(out, fn []byte, c moduleCounts, check []byte) (_ []byte, writesTable, ok bool) {
	r := reader{b: fn, ok: true}
	groups := r.u32()
	for i := uint32(0); i < groups && r.ok; i++ {
		r.u32()
		r.byte()
	}
	if !r.ok {
		return nil, false, false
	}
	out = append(out, fn[:r.p]...)
	if r.p >= len(fn) || fn[r.p] != 0x03 {
		out = append(out, check...)
	}
	for r.p < len(fn) {
		start := r.p
		op := r.byte()
		if !r.skipImmediates(op, c) {
			return nil, false, false
		}
		out = append(out, fn[start:r.p]...)
		if op == 0x03 {
			out = append(out, check...)
		}
	}
	return out, r.writesTable, r.ok && len(fn) > 0 && fn[len(fn)-1] == 0x0b
}

// reader reads a module's encoding. It starts ok; ok turns false at the
// first thing it cannot read, and stays false.
type reader struct {
	b  []byte
	p  int
	ok bool
	// writesTable is set by skipImmediates at an instruction that
	// writes a table.
	writesTable bool
}

func (r *reader) fail() { r.ok = false; r.p = len(r.b) }

func (r *reader) byte() byte {
	if r.p >= len(r.b) {
		r.fail()
		return 0
	}
	c := r.b[r.p]
	r.p++
	return c
}

// u32 reads an unsigned LEB128 of at most 32 bits.
func (r *reader) u32() uint32 {
	v, n := binary.Uvarint(r.b[min(r.p, len(r.b)):])
	if n <= 0 || n > 5 || v >= 1<<32 {
		r.fail()
		return 0
	}
	r.p += n
	return uint32(v)
}

// skipLEB skips a signed or unsigned LEB128 of at most max bytes.
func (r *reader) skipLEB(max int) {
	for i := 0; i < max; i++ {
		if r.byte()&0x80 == 0 {
			return
		}
	}
	r.fail()
}

func (r *reader) name() string {
	n := r.u32()
	if !r.ok || uint64(n) > uint64(len(r.b)-r.p) {
		r.fail()
		return ""
	}
	s := string(r.b[r.p : r.p+int(n)])
	r.p += int(n)
	return s
}

func (r *reader) limits() {
	flags := r.byte()
	if flags > 0x07 {
		r.fail()
		return
	}
	r.skipLEB(10)
	if flags&1 != 0 {
		r.skipLEB(10)
	}
}

// skipImmediates skips the immediates of instruction op, which it knows
// for WebAssembly 2.0's instructions but SIMD's (and tail calls'); it is
// false for any other, and for a global or function past the module's
// (c), which would be one the host adds.
func (r *reader) skipImmediates(op byte, c moduleCounts) bool {
	switch {
	case op <= 0x01, op == 0x05, op == 0x0b, op == 0x0f, op == 0x1a, op == 0x1b,
		op >= 0x45 && op <= 0xc4, op == 0xd1:
		// No immediate.
	case op >= 0x02 && op <= 0x04: // block, loop, if: a block type
		r.skipLEB(5) // 0x40, a value type or a type index: a signed 33-bit number
	case op == 0x10, op == 0x12, op == 0xd2: // call, return_call, ref.func
		if uint64(r.u32()) >= c.funcs {
			return false
		}
	case op == 0x0c, op == 0x0d, // br, br_if
		op >= 0x20 && op <= 0x22, // local.*
		op == 0x25, op == 0x26,   // table.get, table.set
		op == 0x3f, op == 0x40: // memory.size, memory.grow
		r.writesTable = r.writesTable || op == 0x26
		r.u32()
	case op == 0x0e: // br_table
		n := r.u32()
		for i := uint32(0); i <= n && r.ok; i++ {
			r.u32()
		}
	case op == 0x11, op == 0x13: // call_indirect, return_call_indirect
		r.u32()
		r.u32()
	case op == 0x1c: // select with types
		n := r.u32()
		for i := uint32(0); i < n && r.ok; i++ {
			r.byte()
		}
	case op == 0x23, op == 0x24: // global.get, global.set
		if uint64(r.u32()) >= c.globals {
			return false
		}
	case op >= 0x28 && op <= 0x3e: // loads and stores: align, offset
		if r.u32()&0x40 != 0 { // multiple memories: an index
			r.u32()
		}
		r.skipLEB(10)
	case op == 0x41:
		r.skipLEB(5)
	case op == 0x42:
		r.skipLEB(10)
	case op == 0x43:
		r.skip(4)
	case op == 0x44:
		r.skip(8)
	case op == 0xd0: // ref.null: a reference type
		r.byte()
	case op == 0xfc:
		switch sub := r.u32(); {
		case sub <= 7: // saturating truncations
		case sub == 8, sub == 10, sub == 12, sub == 14: // memory.init, memory.copy, table.init, table.copy
			r.writesTable = r.writesTable || sub >= 12
			r.u32()
			r.u32()
		case sub == 9, sub == 11, sub == 13, sub >= 15 && sub <= 17:
			// data.drop, memory.fill, elem.drop, table.grow, table.size,
			// table.fill
			r.writesTable = r.writesTable || sub == 15 || sub == 17
			r.u32()
		default:
			return false
		}
	default:
		return false
	}
	return r.ok
}

func (r *reader) skip(n int) {
	if n > len(r.b)-r.p {
		r.fail()
		return
	}
	r.p += n
}
