// Command sharq is the quota-share scheduler for shared GPU capacity.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "usage: sharq serve|sim ...")
	os.Exit(2)
}
