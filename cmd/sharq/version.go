package main

import (
	"context"
	"fmt"
	"io"
	"runtime/debug"
)

// runVersion prints the binary's module version, with the VCS revision it
// was built from when the build recorded one.
func runVersion(_ context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		fmt.Fprintln(stderr, "usage: sharq version")
		return 2
	}
	fmt.Fprintln(stdout, versionLine(debug.ReadBuildInfo()))
	return 0
}

// versionLine is "sharq VERSION[, revision REV[ (modified)]], built with GO".
func versionLine(bi *debug.BuildInfo, ok bool) string {
	if !ok {
		return "sharq (unknown version: built without module information)"
	}
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var rev, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				modified = " (modified)"
			}
		}
	}
	if rev == "" {
		return fmt.Sprintf("sharq %s, built with %s", v, bi.GoVersion)
	}
	return fmt.Sprintf("sharq %s, revision %s%s, built with %s", v, rev, modified, bi.GoVersion)
}
