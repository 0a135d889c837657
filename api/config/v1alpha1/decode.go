package v1alpha1

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// Decode decodes a configuration strictly: an unknown or duplicated field
// is an error that names it with its path, such as
// unknown field "plugins[0].failurPolicy".
func Decode(data []byte) (*Configuration, error) {
	jsonData, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		return nil, yamlError(err)
	}
	cfg := &Configuration{}
	strictErrs, err := sigsjson.UnmarshalStrict(jsonData, cfg, sigsjson.DisallowUnknownFields, sigsjson.DisallowDuplicateFields)
	if err != nil {
		// A bad duration fails in metav1.Duration, and a bad quantity in
		// resource.Quantity, whose errors do not say where it is: find
		// it and name it.
		if durErrs := checkValues(jsonData); len(durErrs) > 0 {
			return nil, durErrs.ToAggregate()
		}
		return nil, typeError(err)
	}
	if len(strictErrs) > 0 {
		for i, e := range strictErrs {
			strictErrs[i] = unknownFieldError(e)
		}
		return nil, errors.Join(strictErrs...)
	}
	return cfg, nil
}

// duplicateKey is the YAML decoder's message of a key given twice.
var duplicateKey = regexp.MustCompile(`line (\d+): key (".*") already set in map`)

// yamlError says "line 5: key "port" is given twice; give each key once"
// for the decoder's multi-line "yaml: unmarshal errors:\n  line 5: key
// "port" already set in map"; other errors are returned as they are.
func yamlError(err error) error {
	m := duplicateKey.FindAllStringSubmatch(err.Error(), -1)
	if m == nil {
		return err
	}
	var msgs []string
	for _, d := range m {
		msgs = append(msgs, fmt.Sprintf("line %s: key %s is given twice; give each key once", d[1], d[2]))
	}
	return errors.New(strings.Join(msgs, "; "))
}

// unknownField is the strict decoder's message of an unknown field.
var unknownField = regexp.MustCompile(`^unknown field "(.*)"$`)

// unknownFieldError adds the fields that are accepted where an unknown
// field was found: unknown field "plugins[0].failurPolicy"; a plugins
// entry has name, args, failurePolicy, external.
func unknownFieldError(err error) error {
	m := unknownField.FindStringSubmatch(err.Error())
	if m == nil {
		return err
	}
	parent, where := "", "the top level"
	if i := strings.LastIndex(m[1], "."); i >= 0 {
		parent = m[1][:i]
		where = describePath(parent)
	}
	t := typeAt(reflect.TypeOf(Configuration{}), parent)
	if t == nil || t.Kind() != reflect.Struct {
		return err
	}
	return fmt.Errorf("%w; %s has %s", err, where, strings.Join(jsonFields(t), ", "))
}

// describePath names the object at a path: "plugins[0]" is "a plugins
// entry", "plugins[0].external" is "plugins[0].external".
func describePath(path string) string {
	if i := strings.Index(path, "["); i > 0 && strings.HasSuffix(path, "]") && !strings.Contains(path[:i], ".") {
		return "a " + path[:i] + " entry"
	}
	return path
}

// fieldPathType is the declared type of the field at a dotted path of the
// decoder's type errors, such as "plugins" or "plugins.external", or nil.
func fieldPathType(path string) reflect.Type {
	t := reflect.TypeOf(Configuration{})
	segs := strings.Split(path, ".")
	for i, seg := range segs {
		t = fieldType(t, seg)
		if t == nil {
			return nil
		}
		if i < len(segs)-1 {
			for t.Kind() == reflect.Slice || t.Kind() == reflect.Pointer {
				t = t.Elem()
			}
		}
	}
	return t
}

// typeAt is the Go type of the value at a path of JSON names, such as
// "plugins[0].external", or nil.
func typeAt(t reflect.Type, path string) reflect.Type {
	for _, seg := range strings.FieldsFunc(path, func(r rune) bool { return r == '.' }) {
		name, _, indexed := strings.Cut(seg, "[")
		t = fieldType(t, name)
		if t == nil {
			return nil
		}
		for ; indexed && (t.Kind() == reflect.Slice || t.Kind() == reflect.Pointer); t = t.Elem() {
		}
	}
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// fieldType is the type of the field of struct t whose JSON name is name,
// looking through inlined structs, or nil.
func fieldType(t reflect.Type, name string) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil
	}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if tag == "" && f.Anonymous {
			if ft := fieldType(f.Type, name); ft != nil {
				return ft
			}
			continue
		}
		if tag == name {
			return f.Type
		}
	}
	return nil
}

// jsonFields are the JSON names of a struct's fields, inlined ones
// included, in declaration order.
func jsonFields(t reflect.Type) []string {
	var out []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case tag == "-":
		case tag == "" && f.Anonymous:
			out = append(out, jsonFields(f.Type)...)
		case tag != "":
			out = append(out, tag)
		}
	}
	return out
}

// jsonTypeError is the message of a value of the wrong JSON type, whose
// error type the decoder does not export: "json: cannot unmarshal object
// into Go struct field Configuration.plugins of type []v1alpha1.PluginConfig".
var jsonTypeError = regexp.MustCompile(`^json: cannot unmarshal (\w+)(?: \S+)? into Go struct field [^.]+\.(\S+) of type (\S+)$`)

// typeError says in the file's terms what a value of the wrong type should
// be, such as "plugins: must be a list, not an object"; other errors are
// returned as they are.
func typeError(err error) error {
	m := jsonTypeError.FindStringSubmatch(err.Error())
	if m == nil {
		return err
	}
	got := map[string]string{"object": "an object", "array": "a list", "string": "a string", "number": "a number", "bool": "true or false"}[m[1]]
	if got == "" {
		got = m[1]
	}
	want := "an object"
	switch t := strings.TrimPrefix(m[3], "*"); {
	case strings.HasPrefix(t, "[]"):
		want = "a list"
	case t == "string" || t == "v1alpha1.FailurePolicy":
		want = "a string"
	case t == "bool":
		want = "true or false"
	case strings.HasPrefix(t, "int") || strings.HasPrefix(t, "float") || strings.HasPrefix(t, "uint"):
		want = "a number"
	}
	if t := fieldPathType(m[2]); t != nil && t.Kind() == reflect.Slice && want != "a list" {
		// The decoder names a list's entry by the list.
		return fmt.Errorf("each entry of %s must be %s, not %s", m[2], want, got)
	}
	return fmt.Errorf("%s: must be %s, not %s", m[2], want, got)
}

// The types whose values the decoder checks with errors that do not say
// where the value is: checkValues finds such values and names them.
var (
	durationType = reflect.TypeOf(metav1.Duration{})
	quantityType = reflect.TypeOf(resource.Quantity{})
)

// checkValues names the fields of a configuration, as JSON, whose value
// is not a duration where the type has a metav1.Duration, or not a
// quantity where it has a resource.Quantity. Which fields those are comes
// from the Go types (checkValue), so that a new duration field is checked
// as soon as it is declared.
func checkValues(jsonData []byte) field.ErrorList {
	dec := json.NewDecoder(bytes.NewReader(jsonData))
	dec.UseNumber() // a number is shown as it is written
	var doc any
	if dec.Decode(&doc) != nil {
		return nil
	}
	return checkValue(reflect.TypeOf(Configuration{}), doc, nil)
}

// checkValue checks value, decoded JSON, against Go type t at path, and
// what it holds against t's fields or elements.
func checkValue(t reflect.Type, value any, path *field.Path) field.ErrorList {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if value == nil {
		return nil
	}
	switch {
	case t == durationType:
		if s, ok := value.(string); ok {
			if _, err := time.ParseDuration(s); err == nil {
				return nil
			}
		}
		return field.ErrorList{field.Invalid(path, shownValue(value), "must be a duration string such as 500ms, 10s or 1m")}
	case t == quantityType:
		raw, err := json.Marshal(value)
		var q resource.Quantity
		if err == nil && json.Unmarshal(raw, &q) == nil {
			return nil
		}
		return field.ErrorList{field.Invalid(path, shownValue(value), "must be a quantity of bytes such as 64Mi, 128Mi or 1Gi")}
	case t.Kind() == reflect.Slice:
		items, ok := value.([]any)
		if !ok {
			return nil // the decoder's type error says it
		}
		var errs field.ErrorList
		for i, item := range items {
			errs = append(errs, checkValue(t.Elem(), item, path.Index(i))...)
		}
		return errs
	case t.Kind() == reflect.Struct:
		obj, ok := value.(map[string]any)
		if !ok {
			return nil
		}
		return checkFields(t, obj, path)
	}
	return nil
}

// checkFields checks the fields of obj that struct t declares, inlined
// structs included, in t's order.
func checkFields(t reflect.Type, obj map[string]any, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case name == "" && f.Anonymous:
			errs = append(errs, checkFields(f.Type, obj, path)...)
		case name != "" && name != "-" && f.IsExported():
			if v, ok := obj[name]; ok {
				p := field.NewPath(name)
				if path != nil {
					p = path.Child(name)
				}
				errs = append(errs, checkValue(f.Type, v, p)...)
			}
		}
	}
	return errs
}

// shownValue is a value of the file as an error shows it: a string as it
// is, anything else as JSON.
func shownValue(v any) any {
	if s, ok := v.(string); ok {
		return s
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(raw)
}
