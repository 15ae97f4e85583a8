package e2e

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/batch/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/sharq-dev/sharq/internal/testwait"
)

// s3Policies gives team-a S3 on its own bucket alone (and the listing of
// all buckets, which IAM grants on *).
const s3Policies = `accessPolicies:
  - name: team-a-s3
    statements:
      - {effect: Allow, actions: ["s3:ListAllMyBuckets"], resources: ["*"]}
      - {effect: Allow, actions: ["s3:*"], resources: ["arn:aws:s3:::team-a", "arn:aws:s3:::team-a/*"]}
`

// Ensure sharq serve without --s3-endpoint serves S3 on its one endpoint,
// over HTTP and HTTPS, to the AWS CLI (aws s3 mb/cp/ls/sync) and boto3
// pointed at it by AWS_ENDPOINT_URL alone and signed with sharq's keys: a
// team's policy gives it its own bucket and refuses it another with
// AccessDenied, and the audit log records the writes.
func TestBuiltinS3Clients(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"aws", "python3"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is not on PATH (%v): TestBuiltinS3Clients drives the server with the AWS CLI and boto3", tool, err)
		}
	}
	for _, useTLS := range []bool{false, true} {
		t.Run(map[bool]string{false: "http", true: "https"}[useTLS], func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			admin := createKey(t, dir, "admin", "AdministratorAccess")
			opts := serverOptions{dataDir: dir, executor: "local", args: []string{"--auth", "sigv4"}}
			var caEnv []string
			if useTLS {
				certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
				cert := writeCert(t, certFile, keyFile, 1)
				pool := x509.NewCertPool()
				pool.AddCert(cert)
				opts.tls = &tls.Config{RootCAs: pool}
				opts.args = append(opts.args, "--tls-cert", certFile, "--tls-key", keyFile)
				caEnv = []string{"AWS_CA_BUNDLE=" + certFile}
			}
			s := startServer(t, opts)
			awsEnv := func(k key) []string {
				env := append(append(k.env(), caEnv...), "AWS_ENDPOINT_URL="+s.url, "AWS_PAGER=", "AWS_MAX_ATTEMPTS=1",
					"AWS_DEFAULT_REGION="+region, "AWS_REGION="+region)
				return serverEnv(serverOptions{env: append(env, awsIsolated...), unsetEnv: awsCredentialVars})
			}
			cli := func(k key, args ...string) (string, error) {
				cmd := exec.CommandContext(ctx(t), "aws", args...)
				cmd.Env = awsEnv(k)
				out, err := cmd.CombinedOutput()
				return string(out), err
			}
			mustCLI := func(k key, args ...string) string {
				t.Helper()
				out, err := cli(k, args...)
				if err != nil {
					t.Fatalf("aws %s: %v\n%s", strings.Join(args, " "), err, out)
				}
				return out
			}
			file := filepath.Join(t.TempDir(), "policies.yaml")
			fatalIf(t, "write policies", os.WriteFile(file, []byte(s3Policies), 0o644))
			apply := exec.CommandContext(ctx(t), sharqBin, "apply", "-f", file, "--endpoint", s.url)
			apply.Env = awsEnv(admin)
			if out, err := apply.CombinedOutput(); err != nil {
				t.Fatalf("sharq apply -f policies.yaml: %v\n%s", err, out)
			}
			team := createKey(t, dir, "team-a", "team-a-s3")
			mustCLI(admin, "s3", "mb", "s3://team-a")
			mustCLI(admin, "s3", "mb", "s3://team-b")

			// A tree with a file large enough for a multipart upload.
			src := t.TempDir()
			files := map[string][]byte{"train/a.csv": []byte("x,y\n1,2\n"), "train/b.csv": []byte("x,y\n3,4\n"),
				"big/blob.bin": bytes.Repeat([]byte("sharq s3 "), 12<<20/9)}
			for name, b := range files {
				p := filepath.Join(src, name)
				fatalIf(t, "mkdir", os.MkdirAll(filepath.Dir(p), 0o755))
				fatalIf(t, "write", os.WriteFile(p, b, 0o644))
			}
			mustCLI(team, "s3", "sync", src, "s3://team-a/data/")
			mustCLI(team, "s3", "cp", filepath.Join(src, "train/a.csv"), "s3://team-a/one/a.csv")
			ls := mustCLI(team, "s3", "ls", "--recursive", "s3://team-a/")
			for _, want := range []string{"data/train/a.csv", "data/train/b.csv", "data/big/blob.bin", "one/a.csv"} {
				if !strings.Contains(ls, want) {
					t.Errorf("aws s3 ls --recursive has no %s:\n%s", want, ls)
				}
			}
			top := mustCLI(team, "s3", "ls", "s3://team-a/")
			if !strings.Contains(top, "PRE data/") || !strings.Contains(top, "PRE one/") {
				t.Errorf("aws s3 ls s3://team-a/:\n%s", top)
			}
			back := t.TempDir()
			mustCLI(team, "s3", "sync", "s3://team-a/data/", back)
			for name, want := range files {
				got, err := os.ReadFile(filepath.Join(back, name))
				if err != nil || !bytes.Equal(got, want) {
					t.Errorf("synced back %s: %d bytes (%v), want %d", name, len(got), err, len(want))
				}
			}
			// A second sync finds nothing to do.
			if out := mustCLI(team, "s3", "sync", src, "s3://team-a/data/"); strings.TrimSpace(out) != "" {
				t.Errorf("a second sync uploaded again:\n%s", out)
			}

			// Copies within S3: the large file by parts (UploadPartCopy).
			mustCLI(team, "s3", "cp", "s3://team-a/data/big/blob.bin", "s3://team-a/copy/blob.bin")
			mustCLI(team, "s3", "cp", "s3://team-a/copy/blob.bin", filepath.Join(back, "copied.bin"))
			if got, err := os.ReadFile(filepath.Join(back, "copied.bin")); err != nil || !bytes.Equal(got, files["big/blob.bin"]) {
				t.Errorf("the copy within S3 came back as %d bytes (%v), want %d", len(got), err, len(files["big/blob.bin"]))
			}

			// Another team's bucket is refused, as AWS refuses it.
			mustCLI(admin, "s3", "cp", filepath.Join(src, "train/a.csv"), "s3://team-b/secret.csv")
			for _, args := range [][]string{
				{"s3", "cp", "s3://team-b/secret.csv", "s3://team-a/stolen.csv"},
				{"s3", "cp", filepath.Join(src, "train/a.csv"), "s3://team-b/a.csv"},
				{"s3", "ls", "s3://team-b/"},
				{"s3", "mb", "s3://team-c"},
			} {
				// A HEAD's refusal has no body: the CLI says 403 Forbidden.
				out, err := cli(team, args...)
				if err == nil || !strings.Contains(out, "AccessDenied") && !strings.Contains(out, "(403)") {
					t.Errorf("aws %s as team-a: %v, want AccessDenied:\n%s", strings.Join(args, " "), err, out)
				}
			}

			// A wrong secret and no signature at all are refused.
			forged := key{ID: team.ID, Secret: "not-" + team.Secret}
			if out, err := cli(forged, "s3", "ls", "s3://team-a/"); err == nil || !strings.Contains(out, "SignatureDoesNotMatch") {
				t.Errorf("aws s3 ls with a wrong secret: %v, want SignatureDoesNotMatch:\n%s", err, out)
			}
			if out, err := cli(team, "s3", "ls", "--recursive", "--no-sign-request", "s3://team-a/"); err == nil || strings.Contains(out, "a.csv") {
				t.Errorf("aws s3 ls --no-sign-request listed team-a: %v\n%s", err, out)
			}

			// boto3, as the SageMaker SDK uses it before it submits.
			cmd := exec.CommandContext(ctx(t), "python3", "scripts/boto3-s3.py", "team-a", "team-b", t.TempDir())
			cmd.Env = awsEnv(team)
			out, err := cmd.CombinedOutput()
			want := "listed True\nhead ok\nget True\nmultipart True True\nrange True\nlist ['code/', 'copy/', 'data/', 'one/']\n" +
				"missing 404 NoSuchKey\nother AccessDenied AccessDenied\n"
			if err != nil || string(out) != want {
				t.Errorf("scripts/boto3-s3.py: %v\n%s\nwant:\n%s", err, out, want)
			}

			// The writes are in the audit log, allowed and refused.
			checkAuditLog(t, s, awsEnv(admin), "s3:PutObject", "arn:aws:s3:::team-a/data/train/a.csv", "arn:aws:s3:::team-b/a.csv", "s3:CreateBucket")
			// Every object lives under the data dir's buckets.
			if _, err := os.Stat(filepath.Join(dir, "s3", "buckets", "team-a")); err != nil {
				t.Errorf("team-a's bucket is not in the data dir: %v", err)
			}
		})
	}
}

// checkAuditLog checks that the audit log holds each of words.
func checkAuditLog(t *testing.T, s *server, env []string, words ...string) {
	t.Helper()
	testwait.Until(t, 10*time.Second, func() error {
		cmd := exec.CommandContext(ctx(t), sharqBin, "events", "--audit", "--endpoint", s.url)
		cmd.Env = env
		b, err := cmd.CombinedOutput()
		out := string(b)
		if err != nil {
			return notYet("sharq events --audit: %v\n%s", err, out)
		}
		for _, w := range words {
			if !strings.Contains(out, w) {
				return notYet("the audit log has no %s:\n%s", w, out)
			}
		}
		return nil
	})
}

// Ensure a job's own S3 calls reach the built-in S3: the local executor
// gives it AWS_ENDPOINT_URL_S3 (the server's endpoint), and boto3 in the
// job, signed with the key its payload's Environment carries, reads an
// object put there before.
func TestBuiltinS3FromJob(t *testing.T) {
	t.Parallel()
	dataDir := t.TempDir()
	admin := createKey(t, dataDir, "admin", "AdministratorAccess")
	s := startLocalWith(t, serverOptions{dataDir: dataDir, args: []string{"--auth", "sigv4"}, env: awsIsolated, unsetEnv: awsCredentialVars}, newMark(t))
	c := s.clientWith(admin)
	setUpWalkthrough(t, c, 3)
	creds, hc := s.sdkCreds(admin)
	s3c := s3.New(s3.Options{Region: region, BaseEndpoint: aws.String(s.url), UsePathStyle: true, Credentials: creds, HTTPClient: hc})
	_, err := s3c.CreateBucket(ctx(t), &s3.CreateBucketInput{Bucket: aws.String("job-data")})
	fatalIf(t, "CreateBucket", err)
	_, err = s3c.PutObject(ctx(t), &s3.PutObjectInput{Bucket: aws.String("job-data"), Key: aws.String("greeting.txt"), Body: strings.NewReader("hello from S3")})
	fatalIf(t, "PutObject", err)

	script := `import boto3, os
print("endpoint", os.environ["AWS_ENDPOINT_URL_S3"])
print(boto3.client("s3").get_object(Bucket="job-data", Key="greeting.txt")["Body"].read().decode())`
	job := s.submitLocal(t, c, localJob{name: "reads-s3", share: "QS1", priority: 1, argv: []string{"python3", "-c", script},
		env: map[string]string{"AWS_ACCESS_KEY_ID": admin.ID, "AWS_SECRET_ACCESS_KEY": admin.Secret, "AWS_DEFAULT_REGION": region,
			"AWS_CONFIG_FILE": "/dev/null", "AWS_SHARED_CREDENTIALS_FILE": "/dev/null"}})
	d := waitStatus(t, c, job, types.ServiceJobStatusSucceeded, types.ServiceJobStatusFailed)
	out := s.attemptLog(t, attemptID(t, d.LatestAttempt.ServiceResourceId), "stdout")
	if want := "endpoint " + s.url + "\nhello from S3\n"; out != want {
		t.Errorf("the job printed %q (status %s: %s), want %q\nstderr: %s", out, d.Status, aws.ToString(d.StatusReason), want,
			s.attemptLog(t, attemptID(t, d.LatestAttempt.ServiceResourceId), "stderr"))
	}
}
