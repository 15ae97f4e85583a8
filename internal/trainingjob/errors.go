package trainingjob

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// Error is a refused payload.
type Error struct {
	// Malformed is set when the payload is not a CreateTrainingJob request
	// at all (not a JSON object, a field of the wrong type, no
	// ResourceConfig) rather than one that asks for something wrong.
	Malformed bool
	// Reason says what is wrong, naming the field in the payload's own
	// terms, e.g. "ResourceConfig.InstanceCount must be at least 1".
	Reason string
}

func refusef(format string, args ...any) *Error {
	return &Error{Reason: fmt.Sprintf(format, args...)}
}

func (e *Error) Error() string { return e.Named("payload") }

// Named is the message with the payload called name, as an API that takes
// it in a field of that name says it.
func (e *Error) Named(name string) string {
	if e.Malformed {
		return name + " is not a valid CreateTrainingJob request: " + e.Reason
	}
	return name + ": " + e.Reason
}

// decodeReason says why json.Unmarshal refused a payload: a syntax error as
// encoding/json says it, a type error in the payload's terms.
func decodeReason(err error) string {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) {
		return err.Error()
	}
	got := jsonValue(te.Value)
	if te.Field == "" {
		return "a CreateTrainingJob request is a JSON object, not " + got
	}
	path, declared := fieldPath(te.Field)
	if declared != nil && declared != te.Type && (declared.Kind() == reflect.Map || declared.Kind() == reflect.Slice) {
		what := "item"
		if declared.Kind() == reflect.Map {
			what = "value"
		}
		return fmt.Sprintf("each %s of %s must be %s, not %s", what, path, jsonKind(te.Type), got)
	}
	return fmt.Sprintf("%s must be %s, not %s", path, jsonKind(te.Type), got)
}

// fieldPath turns encoding/json's path of a field (InputDataConfig.ChannelName)
// into the payload's (InputDataConfig[].ChannelName) and gives the field's
// declared type, pointers removed; nil if the path is not Request's.
func fieldPath(field string) (string, reflect.Type) {
	t := reflect.TypeFor[Request]()
	var path []string
	for name := range strings.SplitSeq(field, ".") {
		t = deref(t)
		if t.Kind() == reflect.Slice && len(path) > 0 {
			t = deref(t.Elem())
			path[len(path)-1] += "[]"
		}
		if t.Kind() != reflect.Struct {
			return field, nil
		}
		f, ok := t.FieldByName(name)
		if !ok || !f.IsExported() {
			return field, nil
		}
		path = append(path, name)
		t = f.Type
	}
	return strings.Join(path, "."), deref(t)
}

func deref(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// jsonKind says what JSON value decodes into t.
func jsonKind(t reflect.Type) string {
	switch deref(t).Kind() {
	case reflect.String:
		return "a string"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice, reflect.Array:
		return "an array"
	default:
		return "an object"
	}
}

// jsonValue names the JSON value encoding/json describes as v ("string",
// "number 1.5", ...).
func jsonValue(v string) string {
	switch v {
	case "string":
		return "a string"
	case "number":
		return "a number"
	case "bool":
		return "a boolean"
	case "array":
		return "an array"
	case "object":
		return "an object"
	}
	return strings.TrimPrefix(v, "number ")
}
