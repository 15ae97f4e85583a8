package access

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

// FuzzAuditEntryJSON checks that AppendJSON writes what json.Marshal does.
func FuzzAuditEntryJSON(f *testing.F) {
	f.Add(int64(0), int64(1764682581123456789), true, "anonymous", "", "batch:SubmitServiceJob", "arn:aws:batch:us-east-1:000000000000:job-queue/q", "OK", "1b4e28ba-2fa1-11d2-883f-0016d3cca427")
	f.Add(int64(7), int64(1764682581000000000), true, "ci", "AKIA0000", "POST /v1/x", "*", "HTTP 500", "x")
	f.Add(int64(0), int64(0), false, "a<b", "é", "\"", "\\", "\n", "&")
	f.Add(int64(-3), int64(-1<<62), true, "", "", "", "", "", "")
	f.Fuzz(func(t *testing.T, seq, nanos int64, utc bool, key, keyID, op, resource, result, reqID string) {
		at := time.Unix(0, nanos).UTC()
		if !utc {
			at = at.In(time.FixedZone("x", 3600))
		}
		e := AuditEntry{Seq: seq, Time: at, Key: key, AccessKeyID: keyID, Operation: op, Resource: resource, Result: result, RequestID: reqID}
		want, werr := json.Marshal(e)
		got, gerr := e.AppendJSON([]byte("prefix"))
		if (werr == nil) != (gerr == nil) {
			t.Fatalf("AppendJSON error %v, json.Marshal's %v", gerr, werr)
		}
		if werr == nil && !bytes.Equal(got, append([]byte("prefix"), want...)) {
			t.Fatalf("AppendJSON = %s, want prefix%s", got, want)
		}
	})
}

// TestAuditEntryJSONEveryField sets every field of an entry and checks
// that AppendJSON writes it as json.Marshal does: a field added to
// AuditEntry and not to AppendJSON is not lost from the log.
func TestAuditEntryJSONEveryField(t *testing.T) {
	var e AuditEntry
	v := reflect.ValueOf(&e).Elem()
	for i := range v.NumField() {
		switch f := v.Field(i); {
		case !v.Type().Field(i).IsExported():
		case f.Type() == reflect.TypeFor[time.Time]():
			f.Set(reflect.ValueOf(time.Unix(1764682581, 5).UTC()))
		case f.Kind() == reflect.String:
			f.SetString("x")
		case f.CanInt():
			f.SetInt(7)
		default:
			t.Fatalf("AuditEntry.%s is a %s, which this test does not set", v.Type().Field(i).Name, f.Type())
		}
	}
	want, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := e.AppendJSON(nil); !bytes.Equal(got, want) {
		t.Errorf("AppendJSON = %s, want %s", got, want)
	}
}
