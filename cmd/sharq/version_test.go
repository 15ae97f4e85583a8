package main

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}, {"-version"}} {
		var out, errOut strings.Builder
		if code := run(t.Context(), args, &out, &errOut); code != 0 || !strings.HasPrefix(out.String(), "sharq ") || errOut.Len() > 0 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, out.String(), errOut.String())
		}
	}
	bi := &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "v1.2.3"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.modified", Value: "true"}}}
	if got, want := versionLine(bi, true), "sharq v1.2.3, revision abc123 (modified), built with go1.26.0"; got != want {
		t.Errorf("versionLine = %q, want %q", got, want)
	}
	bi.Settings, bi.Main.Version = nil, ""
	if got, want := versionLine(bi, true), "sharq (devel), built with go1.26.0"; got != want {
		t.Errorf("versionLine = %q, want %q", got, want)
	}
}

// TestUnknownCommand: an unknown command is named, with the usage once.
func TestUnknownCommand(t *testing.T) {
	var out, errOut strings.Builder
	code := run(t.Context(), []string{"bogus"}, &out, &errOut)
	if code != 2 || out.Len() > 0 || strings.Count(errOut.String(), "usage:") != 1 || !strings.HasPrefix(errOut.String(), `sharq: unknown command "bogus"`) {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out.String(), errOut.String())
	}
}
