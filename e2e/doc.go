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
// The SageMaker tests (sagemaker_test.go) run scripts/sagemaker/trainer.py,
// a boto3 client that does what the SageMaker Python SDK's ModelTrainer and
// aws_batch.TrainingQueue do, against a server run as root (its jobs see
// /opt/ml) with --s3-endpoint at a moto_server; the driver and training
// scripts beside it are what the jobs' channels carry. As root, by hand:
//
//	moto_server -p 5000 &
//	export AWS_ACCESS_KEY_ID=testing AWS_SECRET_ACCESS_KEY=testing
//	go run ./cmd/sharq serve --executor local --data-dir "$(mktemp -d)" --s3-endpoint http://127.0.0.1:5000 &
//	e2e/scripts/sagemaker/trainer.py flow --batch http://127.0.0.1:8080 --s3 http://127.0.0.1:5000 \
//		--mark by-hand --bucket by-hand --work "$(mktemp -d)"
//
// No process a test starts outlives it: servers are killed at the end of
// their test, and so is any process still using their data dir.
package e2e
