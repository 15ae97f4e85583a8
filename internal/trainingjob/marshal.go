package trainingjob

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
)

// Marshal writes the request as JSON. A request built in Go is written in
// Request's field order, leaving out what is unset. A parsed one is written
// with the members of the parsed document that Request does not declare
// (RoleArn, ResourceConfig.VolumeSizeInGB, ...) kept where they were, so
// that editing a payload loses nothing; its members are then in sorted
// order.
func (r *Request) Marshal() ([]byte, error) {
	b, err := json.Marshal(r)
	if err != nil || r.raw == nil {
		return b, err
	}
	typed, err := decodeAny(b)
	if err != nil {
		return nil, err
	}
	raw, err := decodeAny(r.raw)
	if err != nil {
		return nil, err
	}
	return json.Marshal(keep(typed, raw, reflect.TypeFor[Request]()))
}

func decodeAny(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	err := d.Decode(&v)
	return v, err
}

// keep adds to typed, the JSON of a value of type t, the members of raw
// that t does not declare, at every depth: in objects, and in the elements
// of arrays of objects by position.
func keep(typed, raw any, t reflect.Type) any {
	t = deref(t)
	switch t.Kind() {
	case reflect.Struct:
		rm, ok := raw.(map[string]any)
		if !ok {
			return typed
		}
		tm, ok := typed.(map[string]any)
		if !ok {
			tm = map[string]any{}
		}
		for k, v := range rm {
			f, known := fieldFold(t, k)
			if !known {
				tm[k] = v
				continue
			}
			tv, set := tm[f.Name]
			switch {
			case set:
				tm[f.Name] = keep(tv, v, f.Type)
			case f.Type.Kind() == reflect.Struct:
				// An object left out because what it declares is unset
				// keeps what it does not declare.
				if m, _ := keep(nil, v, f.Type).(map[string]any); len(m) > 0 {
					tm[f.Name] = m
				}
			}
		}
		if len(tm) == 0 && typed == nil {
			return nil
		}
		return tm
	case reflect.Slice:
		ts, ok1 := typed.([]any)
		rs, ok2 := raw.([]any)
		if ok1 && ok2 {
			for i := range min(len(ts), len(rs)) {
				ts[i] = keep(ts[i], rs[i], t.Elem())
			}
		}
	}
	return typed
}

// fieldFold finds the field of struct type t that encoding/json decodes the
// member key into: by name, ignoring case.
func fieldFold(t reflect.Type, key string) (reflect.StructField, bool) {
	if f, ok := t.FieldByName(key); ok && f.IsExported() {
		return f, true
	}
	for i := range t.NumField() {
		if f := t.Field(i); f.IsExported() && strings.EqualFold(f.Name, key) {
			return f, true
		}
	}
	return reflect.StructField{}, false
}
