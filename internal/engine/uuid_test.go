package engine

import (
	"fmt"
	"regexp"
	"testing"
)

// A job ID is a UUID in its usual form, version 7 with its variant bits.
func TestNewUUID(t *testing.T) {
	re := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	for range 100 {
		if id := newUUID(); !re.MatchString(id) {
			t.Fatalf("newUUID() = %q", id)
		}
	}
	// In the order they were made, many in one millisecond.
	last := ""
	for range 10_000 {
		id := newUUID()
		if id <= last {
			t.Fatalf("newUUID() = %s after %s", id, last)
		}
		last = id
	}
	b := [16]byte{0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef, 0xfe, 0xdc, 0xba, 0x98, 0x76, 0x54, 0x32, 0x10}
	if got, want := formatUUID(b), fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16]); got != want {
		t.Errorf("formatUUID = %s, want %s", got, want)
	}
}
