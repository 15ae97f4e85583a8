// Command sharq-supervise is the local executor's supervisor on its own:
// `sharq-supervise __supervise DIR` does what `sharq __supervise DIR` does,
// but it links nothing else, so the process that stays resident beside the
// jobs is a fraction of the sharq binary's size. `sharq serve --supervisor
// PATH` uses it; build it from the same source as sharq.
package main

import (
	"fmt"
	"os"

	"github.com/sharq-dev/sharq/internal/executor/local"
)

func main() {
	if code, ok := local.HiddenMain(os.Args[1:]); ok {
		os.Exit(code)
	}
	fmt.Fprintln(os.Stderr, "usage: sharq-supervise "+local.SupervisorArg+" DATA_DIR (started by sharq serve --supervisor)")
	os.Exit(2)
}
