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

// FuzzAppendString checks AppendString against json.Marshal.
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain", "q\"b\\s/<>&", "\x00\x1f\b\f\n\r\t", "é\u2028\u2029", "\xff\xfe", "\xed\xa0\x80"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := AppendString([]byte("x"), s); string(got) != "x"+string(want) {
			t.Fatalf("AppendString(%q) = %s, want x%s", s, got, want)
		}
	})
}
