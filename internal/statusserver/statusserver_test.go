package statusserver

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
)

func TestLimiterLetsOneUpdatePerIntervalThrough(t *testing.T) {
	clock := clocktesting.NewFakeClock(time.Unix(1000, 0))
	l := newUpdateLimiter(2*time.Second, clock)
	if release, _ := l.reserve("a"); release == nil {
		t.Fatal("the first update was refused")
	}
	clock.Step(500 * time.Millisecond)
	release, wait := l.reserve("a")
	if release != nil || wait != 1500*time.Millisecond {
		t.Fatalf("an update 0.5s after the last: release %v, wait %s; want refused, wait 1.5s", release != nil, wait)
	}
	if release, _ := l.reserve("b"); release == nil {
		t.Fatal("another TrainJob's update was refused")
	}
	clock.Step(1500 * time.Millisecond)
	if release, _ := l.reserve("a"); release == nil {
		t.Fatal("an update after the interval was refused")
	}
}

func TestLimiterReleaseGivesTheSlotBack(t *testing.T) {
	clock := clocktesting.NewFakeClock(time.Unix(1000, 0))
	l := newUpdateLimiter(time.Second, clock)
	first, _ := l.reserve("a")
	clock.Step(2 * time.Second)
	second, _ := l.reserve("a")
	second() // the API server refused it
	clock.Step(100 * time.Millisecond)
	if release, _ := l.reserve("a"); release == nil {
		t.Fatal("a refused update kept the TrainJob's slot")
	}
	first() // too late to matter: a newer update holds the slot
	if release, _ := l.reserve(types.UID("a")); release != nil {
		t.Fatal("releasing an old reservation freed a newer one")
	}
}

func TestBearerToken(t *testing.T) {
	for header, want := range map[string]string{
		"Bearer abc":     "abc",
		"bearer  abc ":   "abc",
		"Basic abc":      "",
		"Bearer":         "",
		"Bearer a b":     "",
		"":               "",
		"\tBEARER\tabc ": "abc",
	} {
		if got := bearerToken(header); got != want {
			t.Errorf("bearerToken(%q) = %q, want %q", header, got, want)
		}
	}
}

func TestServiceAccountNamespace(t *testing.T) {
	for user, want := range map[string]string{
		"system:serviceaccount:team-a:default": "team-a",
		"system:serviceaccount:team-a":         "",
		"system:serviceaccount::default":       "",
		"alice":                                "",
		"system:node:n1":                       "",
	} {
		got, ok := serviceAccountNamespace(user)
		if got != want || ok != (want != "") {
			t.Errorf("serviceAccountNamespace(%q) = %q, %v; want %q", user, got, ok, want)
		}
	}
}
