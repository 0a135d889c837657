package remote

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/trainforge/trainforge/framework"
	pluginv1 "github.com/trainforge/trainforge/proto/trainforge/plugin/v1"
)

var pointsToProto = map[framework.ExtensionPoint]pluginv1.ExtensionPoint{
	framework.PointConfigure:             pluginv1.ExtensionPoint_EXTENSION_POINT_CONFIGURE,
	framework.PointValidate:              pluginv1.ExtensionPoint_EXTENSION_POINT_VALIDATE,
	framework.PointEnforceMLPolicy:       pluginv1.ExtensionPoint_EXTENSION_POINT_ENFORCE_ML_POLICY,
	framework.PointEnforcePodGroupPolicy: pluginv1.ExtensionPoint_EXTENSION_POINT_ENFORCE_POD_GROUP_POLICY,
	framework.PointBuild:                 pluginv1.ExtensionPoint_EXTENSION_POINT_BUILD,
	framework.PointWatch:                 pluginv1.ExtensionPoint_EXTENSION_POINT_WATCH,
	framework.PointStatus:                pluginv1.ExtensionPoint_EXTENSION_POINT_STATUS,
}

var pointsFromProto = invert(pointsToProto)

var fieldErrorTypesToProto = map[field.ErrorType]pluginv1.FieldErrorType{
	field.ErrorTypeInvalid:      pluginv1.FieldErrorType_FIELD_ERROR_TYPE_INVALID,
	field.ErrorTypeRequired:     pluginv1.FieldErrorType_FIELD_ERROR_TYPE_REQUIRED,
	field.ErrorTypeForbidden:    pluginv1.FieldErrorType_FIELD_ERROR_TYPE_FORBIDDEN,
	field.ErrorTypeNotSupported: pluginv1.FieldErrorType_FIELD_ERROR_TYPE_NOT_SUPPORTED,
	field.ErrorTypeDuplicate:    pluginv1.FieldErrorType_FIELD_ERROR_TYPE_DUPLICATE,
	field.ErrorTypeNotFound:     pluginv1.FieldErrorType_FIELD_ERROR_TYPE_NOT_FOUND,
	field.ErrorTypeTooLong:      pluginv1.FieldErrorType_FIELD_ERROR_TYPE_TOO_LONG,
	field.ErrorTypeTooMany:      pluginv1.FieldErrorType_FIELD_ERROR_TYPE_TOO_MANY,
	field.ErrorTypeInternal:     pluginv1.FieldErrorType_FIELD_ERROR_TYPE_INTERNAL,
}

var fieldErrorTypesFromProto = invert(fieldErrorTypesToProto)

var mappingsToProto = map[framework.Mapping]pluginv1.Mapping{
	framework.MapByOwner: pluginv1.Mapping_MAPPING_OWNER_REFERENCE,
	framework.MapByLabel: pluginv1.Mapping_MAPPING_LABEL,
}

var mappingsFromProto = invert(mappingsToProto)

func invert[K, V comparable](m map[K]V) map[V]K {
	out := make(map[V]K, len(m))
	for k, v := range m {
		out[v] = k
	}
	return out
}

func gvkToProto(gvk schema.GroupVersionKind) *pluginv1.GroupVersionKind {
	return &pluginv1.GroupVersionKind{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind}
}

func gvkFromProto(g *pluginv1.GroupVersionKind) schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: g.GetGroup(), Version: g.GetVersion(), Kind: g.GetKind()}
}

func descriptionToProto(d framework.Description, points []framework.ExtensionPoint) *pluginv1.DescribeResponse {
	out := &pluginv1.DescribeResponse{
		Name:               d.Name,
		Version:            d.Version,
		MlPolicyKeys:       d.MLPolicyKeys,
		PodGroupPolicyKeys: d.PodGroupPolicyKeys,
	}
	for _, p := range points {
		out.Points = append(out.Points, pointsToProto[p])
	}
	for _, gvk := range d.Builds {
		out.Builds = append(out.Builds, gvkToProto(gvk))
	}
	return out
}

func descriptionFromProto(r *pluginv1.DescribeResponse) (framework.Description, []framework.ExtensionPoint, error) {
	d := framework.Description{
		Name:               r.GetName(),
		Version:            r.GetVersion(),
		MLPolicyKeys:       r.GetMlPolicyKeys(),
		PodGroupPolicyKeys: r.GetPodGroupPolicyKeys(),
	}
	var points []framework.ExtensionPoint
	for _, p := range r.GetPoints() {
		point, ok := pointsFromProto[p]
		if !ok {
			// A newer plugin may implement points this host does not know;
			// it never calls them.
			continue
		}
		points = append(points, point)
	}
	for i, g := range r.GetBuilds() {
		gvk := gvkFromProto(g)
		if gvk.Version == "" || gvk.Kind == "" {
			return d, nil, fmt.Errorf("Describe: builds[%d] (group %q, version %q, kind %q): a built kind needs a version and a kind, such as version v1 and kind ConfigMap", i, gvk.Group, gvk.Version, gvk.Kind)
		}
		d.Builds = append(d.Builds, gvk)
	}
	if d.Name == "" {
		return d, nil, fmt.Errorf("Describe: the plugin gave no name; it must answer the name its entry has in the configuration file")
	}
	return d, points, nil
}

func fieldErrorsToProto(errs field.ErrorList) []*pluginv1.FieldError {
	out := make([]*pluginv1.FieldError, 0, len(errs))
	for _, e := range errs {
		fe := &pluginv1.FieldError{Type: fieldErrorTypesToProto[e.Type], Field: e.Field, Detail: e.Detail}
		bad := e.BadValue
		if err, ok := bad.(error); ok {
			// field.InternalError's bad value is the error, which
			// encodes as {}: send its text.
			bad = err.Error()
		}
		if bad != nil {
			if v, err := json.Marshal(bad); err == nil {
				fe.BadValue = v
			}
		}
		out = append(out, fe)
	}
	return out
}

func fieldErrorsFromProto(in []*pluginv1.FieldError, l Limits) (field.ErrorList, error) {
	var out field.ErrorList
	for i, fe := range in {
		t, ok := fieldErrorTypesFromProto[fe.GetType()]
		if !ok {
			t = field.ErrorTypeInvalid
		}
		var bad any
		if len(fe.GetBadValue()) > 0 {
			var raw json.RawMessage
			if err := l.decode(badValueDoc(i), fe.GetBadValue(), &raw); err != nil {
				return nil, err
			}
			// Checked: now as encoding/json gives it (numbers as
			// float64), which is how field errors show values.
			if err := json.Unmarshal(raw, &bad); err != nil {
				return nil, badValueDoc(i).refuse(err)
			}
		}
		out = append(out, &field.Error{Type: t, Field: fe.GetField(), BadValue: bad, Detail: fe.GetDetail()})
	}
	return out, nil
}
