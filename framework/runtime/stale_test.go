package runtime_test

import (
	"context"
	"strings"
	"testing"

	"github.com/trainforge/trainforge/framework"
	"github.com/trainforge/trainforge/framework/internal/testfixture"
	frameworkruntime "github.com/trainforge/trainforge/framework/runtime"
)

// A plugin whose Status the host would never call is refused when the
// plugin set is made, naming the plugin and what Status must return,
// rather than run without its status.
func TestAStatusOfAnEarlierSDKIsRefusedAtStart(t *testing.T) {
	registry := framework.Registry{"Old": func(framework.Handle) framework.Plugin { return testfixture.StatusBeforeReport{} }}
	_, err := frameworkruntime.New(context.Background(), registry, []frameworkruntime.PluginSpec{{Name: "Old"}})
	if err == nil || !strings.Contains(err.Error(), `plugin "Old"`) || !strings.Contains(err.Error(), "return *framework.StatusReport") {
		t.Errorf("New = %v, want an error naming the plugin and what Status returns", err)
	}
}
