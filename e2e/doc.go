// Package e2e tests the sharq binary from the outside: TestMain builds
// cmd/sharq once per run (with -race when the tests run with it), and each
// test starts `sharq serve` on a loopback port with its own data dir and
// drives it over HTTP with the AWS SDK for Go and the AWS CLI, as users do.
//
// It holds the acceptance walkthrough (walkthrough_test.go), the restart
// and crash tests (restart_test.go), and the AWS CLI run
// scripts/aws-cli-e2e.sh, which also works by hand against a fresh server:
//
//	go run ./cmd/sharq serve --executor simulated --data-dir "$(mktemp -d)" &
//	e2e/scripts/aws-cli-e2e.sh http://127.0.0.1:8080
//
// No process a test starts outlives it: servers are killed at the end of
// their test, and so is any process still using their data dir.
package e2e
