package s3data

import "testing"

// Ensure progress reads as the STARTING reasons say it, in the unit that
// suits each count.
func TestProgressString(t *testing.T) {
	for p, want := range map[Progress]string{
		{Done: 0, Total: 1023}:                "0 B of 1023 B",
		{Done: 1536, Total: 3 << 20}:          "1.5 KiB of 3.0 MiB",
		{Done: 3 << 29, Total: 4 << 30}:       "1.5 GiB of 4.0 GiB",
		{Done: 1 << 40, Total: (5 << 40) / 2}: "1.0 TiB of 2.5 TiB",
	} {
		if got := p.String(); got != want {
			t.Errorf("%#v reads %q, want %q", p, got, want)
		}
	}
}
