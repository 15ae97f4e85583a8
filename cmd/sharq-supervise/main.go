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
	if len(os.Args) > 1 && os.Args[1] == local.MountArg {
		os.Exit(local.MountMain(os.Args[2:]))
	}
	if len(os.Args) < 2 || os.Args[1] != local.SupervisorArg {
		fmt.Fprintln(os.Stderr, "usage: sharq-supervise "+local.SupervisorArg+" DATA_DIR (started by sharq serve --supervisor)")
		os.Exit(2)
	}
	os.Exit(local.SupervisorMain(os.Args[2:]))
}
