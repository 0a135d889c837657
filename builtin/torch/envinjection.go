package torch

import (
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
)

// envInjectionPath is the runtime field that names the other containers
// that get the variables.
var envInjectionPath = field.NewPath("spec", "mlPolicy", "torch", "envInjection", "targets")

// injectionTargets returns the containers that the runtime's
// mlPolicy.torch.envInjection names, in the order it names them. A name
// the runtime does not have, or the trainer's main container (which gets
// the variables anyway), is a field error on the runtime's field that says
// which names would do. Validate and EnforceMLPolicy both call it, so that
// they agree.
func injectionTargets(info *framework.Info, policy *trainer.MLPolicy) ([]*framework.Container, field.ErrorList) {
	if policy == nil || policy.Torch == nil || policy.Torch.EnvInjection == nil {
		return nil, nil
	}
	var main *framework.Container
	if _, c, err := info.Trainer(); err == nil {
		main = c
	}
	var out []*framework.Container
	var errs field.ErrorList
	for i, target := range policy.Torch.EnvInjection.Targets {
		path := envInjectionPath.Index(i)
		ps := info.PodSet(target.JobName)
		if ps == nil {
			errs = append(errs, field.Invalid(path.Child("jobName"), target.JobName,
				"the runtime has no replicatedJob of that name; it has "+quoted(podSetNames(info))))
			continue
		}
		for j, name := range target.ContainerNames {
			c := findContainer(ps, name)
			switch {
			case c == nil:
				errs = append(errs, field.Invalid(path.Child("containerNames").Index(j), name,
					fmt.Sprintf("replicatedJob %q has no container or init container of that name; it has %s", ps.Name, containerNames(ps))))
			case c == main:
				errs = append(errs, field.Invalid(path.Child("containerNames").Index(j), name,
					fmt.Sprintf("is the trainer's main container, which always gets the %s* variables; name only the other containers of replicatedJob %q", EnvPrefix, ps.Name)))
			default:
				out = append(out, c)
			}
		}
	}
	return out, errs
}

// findContainer returns the container of the PodSet with the given name,
// looking at its containers first and then at its init containers (a
// native sidecar is an init container), or nil.
func findContainer(ps *framework.PodSet, name string) *framework.Container {
	for _, list := range [][]framework.Container{ps.Containers, ps.InitContainers} {
		for k := range list {
			if list[k].Name == name {
				return &list[k]
			}
		}
	}
	return nil
}

func podSetNames(info *framework.Info) []string {
	names := make([]string, 0, len(info.PodSets))
	for _, ps := range info.PodSets {
		names = append(names, ps.Name)
	}
	return names
}

// containerNames lists the containers and init containers of a PodSet
// for a message: `containers "node", "sidecar"; initContainers "wait"`.
func containerNames(ps *framework.PodSet) string {
	var parts []string
	for _, group := range []struct {
		kind string
		list []framework.Container
	}{{"containers", ps.Containers}, {"initContainers", ps.InitContainers}} {
		if len(group.list) == 0 {
			continue
		}
		names := make([]string, 0, len(group.list))
		for _, c := range group.list {
			names = append(names, c.Name)
		}
		parts = append(parts, group.kind+" "+quoted(names))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, "; ")
}

// quoted returns the names quoted and separated by commas, or "none".
func quoted(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	q := make([]string, 0, len(names))
	for _, n := range names {
		q = append(q, strconv.Quote(n))
	}
	return strings.Join(q, ", ")
}
