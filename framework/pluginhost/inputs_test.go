package pluginhost

import (
	"errors"
	"strconv"
	"testing"
	"time"

	pluginv1 "github.com/trainforge/trainforge/proto/trainforge/plugin/v1"
)

func TestKeyOf(t *testing.T) {
	job := func(uid string, generation int, phase string) []byte {
		return []byte(`{"metadata":{"uid":"` + uid + `","generation":` + strconv.Itoa(generation) + `},"status":{"phase":"` + phase + `"}}`)
	}
	req := func(info string, j []byte) *pluginv1.BuildRequest {
		return &pluginv1.BuildRequest{Info: []byte(info), TrainJob: j}
	}
	base := KeyOf("/Build", req(`{"a":1}`, job("u1", 1, "Running")), nil)
	for _, c := range []struct {
		name string
		key  InputKey
		same bool
	}{
		{"its status changed", KeyOf("/Build", req(`{"a":1}`, job("u1", 1, "Done")), nil), true},
		{"another generation", KeyOf("/Build", req(`{"a":1}`, job("u1", 2, "Running")), nil), false},
		{"another TrainJob", KeyOf("/Build", req(`{"a":1}`, job("u2", 1, "Running")), nil), false},
		{"another Info", KeyOf("/Build", req(`{"a":2}`, job("u1", 1, "Running")), nil), false},
		{"another method", KeyOf("/EnforceMLPolicy", req(`{"a":1}`, job("u1", 1, "Running")), nil), false},
	} {
		if (c.key == base) != c.same {
			t.Errorf("%s: same key %t, want %t", c.name, c.key == base, c.same)
		}
	}
	// A request about no TrainJob is keyed by all of it.
	a := KeyOf("/Configure", &pluginv1.ConfigureRequest{Args: []byte(`{"x":1}`)}, nil)
	if b := KeyOf("/Configure", &pluginv1.ConfigureRequest{Args: []byte(`{"x":2}`)}, nil); a == b {
		t.Error("two Configure requests with other args have one key")
	}
}

func TestRecentInputs(t *testing.T) {
	r := RecentInputs{TTL: time.Hour}
	k1, k2 := InputKey{1}, InputKey{2}
	if !r.Empty() || r.Lookup(k1) != nil {
		t.Fatal("a new RecentInputs remembers something")
	}
	e := errors.New("looped")
	r.Add(k1, e)
	if got := r.Lookup(k1); got != e {
		t.Errorf("Lookup after Add = %v, want %v", got, e)
	}
	if r.Lookup(k2) != nil || r.Empty() {
		t.Error("another input is remembered, or nothing is")
	}
	r.Forget(k1)
	if r.Lookup(k1) != nil || !r.Empty() {
		t.Error("a forgotten input is still remembered")
	}

	if !r.AddFirst(k1, e) || r.AddFirst(k1, e) {
		t.Error("AddFirst: want true for an input not remembered, then false")
	}
	r.TTL = 0
	if r.Lookup(k1) != nil {
		t.Error("an input is remembered past the TTL")
	}
	if !r.AddFirst(k1, e) {
		t.Error("AddFirst of an input remembered past the TTL: want true")
	}

	r = RecentInputs{TTL: time.Hour}
	key := func(i int) InputKey { return InputKey{byte(i), byte(i >> 8)} }
	for i := range maxRecentInputs + 1 {
		r.Add(key(i), e)
	}
	if r.Lookup(key(0)) != nil {
		t.Error("the oldest input is kept past the bound")
	}
	if r.Lookup(key(maxRecentInputs)) == nil {
		t.Error("the newest input is not kept")
	}
}
