package jsonlite

import (
	"encoding/json"
	"testing"
)

// FuzzValid checks that what Valid takes, json.Valid takes too.
func FuzzValid(f *testing.F) {
	for _, s := range []string{
		`{"a":[1,true,false,null,{"b":"c\"\\\/\b\f\n\r\t"}],"d":{}}`, `[]`, ` "x" `, `0`, `10`, `01`, `-1`, `1.5`, `1e3`,
		`"\u0041"`, "\"\xff\"", "\"\x01\"", `{"a" 1}`, `{"a":1,}`, `[1,]`, `tru`, `nul`, `{} {}`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if Valid(b) && !json.Valid(b) {
			t.Fatalf("Valid(%q), which json.Valid refuses", b)
		}
	})
}

func TestValidTakesPlainJSON(t *testing.T) {
	for _, s := range []string{`{"a":[1,true,false,null,{"b":"c\"\\\/\b\f\n\r\t"}],"d":{}}`, `[]`, ` "x" `, `0`, `10`} {
		if !Valid([]byte(s)) {
			t.Errorf("Valid(%q) = false", s)
		}
	}
}
