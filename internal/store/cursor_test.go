package store

import "testing"

// Ensure PrefixEnd bounds exactly the strings with the prefix.
func TestPrefixEnd(t *testing.T) {
	cases := map[string]struct {
		p, end string
		ok     bool
	}{
		"Simple":     {"abc", "abd", true},
		"TrailingFF": {"a\xff\xff", "b", true},
		"AllFF":      {"\xff", "", false},
		"Multibyte":  {"é", "\xc3\xaa", true},
	}
	for name, c := range cases {
		end, ok := PrefixEnd(c.p)
		if end != c.end || ok != c.ok {
			t.Errorf("%s: PrefixEnd(%q) = %q, %v; want %q, %v", name, c.p, end, ok, c.end, c.ok)
		}
	}
}
