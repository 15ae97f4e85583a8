package cli

import (
	"go/build"
	"strings"
	"testing"
)

// TestImportsAPITypesOnly: the cli talks to a server through its API, so
// it takes its data shapes from the API packages (whose views are the read
// model's, package readmodel), never from the engine, the scheduler's core,
// the estimator, the store, the executors or the console, whose types are
// the server's inside and may change without the wire changing. Test files
// may assemble a real server from them.
func TestImportsAPITypesOnly(t *testing.T) {
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	const module = "github.com/sharq-dev/sharq/"
	for _, imp := range pkg.Imports {
		for _, inside := range []string{"internal/engine", "internal/core", "internal/forecast", "internal/store", "internal/executor", "internal/web"} {
			if p := module + inside; imp == p || strings.HasPrefix(imp, p+"/") {
				t.Errorf("internal/cli imports %s; take the shape from an API package (sharqapi, batchapi, readmodel)", imp)
			}
		}
	}
}
