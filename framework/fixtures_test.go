package framework_test

import "github.com/trainforge/trainforge/framework/internal/testfixture"

// The fixtures shared with package framework/runtime's tests.
var (
	testJob  = testfixture.TrainJob
	infoWith = testfixture.InfoWith
)
