// Package e2e tests the sharq binary from the outside: each test builds
// cmd/sharq once (TestMain), starts `sharq serve` on a loopback port with
// its own data directory, and drives it over HTTP with the AWS SDK for Go
// and the AWS CLI, the way users do. It holds the acceptance walkthrough,
// the restart and crash tests, and the CLI script scripts/aws-cli-e2e.sh.
package e2e
