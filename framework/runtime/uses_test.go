package runtime

import "testing"

// TestUsesAfterRetire: once retired, no use begins (the work takes the
// new set instead), and the channel closes with the end of the last use
// that began before.
func TestUsesAfterRetire(t *testing.T) {
	u := newUses()
	if !u.begin() {
		t.Fatal("begin refused before any retire")
	}
	ch := u.retire()
	if u.begin() {
		t.Error("begin counted a use of retired sets")
	}
	select {
	case <-ch:
		t.Fatal("closed with a use under way")
	default:
	}
	u.end()
	select {
	case <-ch:
	default:
		t.Fatal("still open after the last use ended")
	}
}
