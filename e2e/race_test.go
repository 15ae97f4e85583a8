//go:build race

package e2e

// raceEnabled builds the server with the race detector when the tests run
// with it, so that the server's own data races fail the tests too.
const raceEnabled = true
