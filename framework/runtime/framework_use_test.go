package runtime_test

import (
	"testing"
	"time"

	frameworkruntime "github.com/trainforge/trainforge/framework/runtime"
)

// closed reports whether ch is closed, waiting at most wait.
func closed(ch <-chan struct{}, wait time.Duration) bool {
	select {
	case <-ch:
		return true
	case <-time.After(wait):
		return false
	}
}

// TestReplaceWaitsForTheWorkThatTookTheSet: a reload's retired channel
// stays open while work that took the replaced set (Use) is under way,
// whatever set a supervised plugin's new description compiled meanwhile,
// and closes when the last of it ends; work that starts after the reload
// takes the new set.
func TestReplaceWaitsForTheWorkThatTookTheSet(t *testing.T) {
	ext := &restarting{name: "Ext"}
	ext.generation.Store(1)
	fw := newFrameworkOf(t, []frameworkruntime.PluginSpec{{Name: "Ext", Plugin: ext}})
	next := newFrameworkOf(t, []frameworkruntime.PluginSpec{{Name: "Ext", Plugin: ext}})

	before, done := fw.Use()
	ext.restart() // the set is compiled again: the same plugins
	recompiled, doneRecompiled := fw.Use()
	if recompiled == before {
		t.Fatal("a new description did not compile a new set")
	}
	retired := fw.Replace(next)
	after, doneAfter := fw.Use()
	if after == before || after == recompiled || after.ID() != next.Current().ID() {
		t.Errorf("Use after Replace took set %d, want the new set %d", after.ID(), next.Current().ID())
	}

	done()
	done() // ending a use twice counts once
	if closed(retired, 50*time.Millisecond) {
		t.Fatal("retired closed while work that took the recompiled set is under way")
	}
	doneRecompiled()
	if !closed(retired, time.Second) {
		t.Fatal("retired still open after the last work that took the replaced sets ended")
	}

	// Nothing under way: retired at once.
	doneAfter()
	if !closed(fw.Replace(newFrameworkOf(t, []frameworkruntime.PluginSpec{{Name: "Ext", Plugin: ext}})), time.Second) {
		t.Error("a Replace with no work under way left its retired channel open")
	}
}
