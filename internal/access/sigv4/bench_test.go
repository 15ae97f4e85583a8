package sigv4_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/sharq-dev/sharq/internal/access/sigv4"
)

// BenchmarkVerify is the CPU a signed SubmitServiceJob request costs the
// server to authenticate: parse, hash the body, recompute and compare.
func BenchmarkVerify(b *testing.B) {
	body := []byte(`{"jobName":"train","jobQueue":"my-sm-training-qm-jq","serviceJobType":"SAGEMAKER_TRAINING",` +
		`"quotaShareName":"QS1","schedulingPriority":1,"serviceRequestPayload":"` +
		strings.Repeat("x", 800) + `"}`)
	now := time.Now()
	req, _ := http.NewRequest("POST", "http://127.0.0.1:8080/v1/submitservicejob", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	sum := sha256.Sum256(body)
	hash := hex.EncodeToString(sum[:])
	req.Header.Set("X-Amz-Content-Sha256", hash)
	creds := aws.Credentials{AccessKeyID: keyID, SecretAccessKey: secret}
	if err := v4.NewSigner().SignHTTP(context.Background(), creds, req, hash, "batch", "us-east-1", now); err != nil {
		b.Fatal(err)
	}
	v := sigv4.New(sigv4.Options{Credentials: keys, Now: func() time.Time { return now }})
	b.ReportAllocs()
	for b.Loop() {
		r := req.Clone(context.Background())
		r.Body = io.NopCloser(bytes.NewReader(body))
		if _, err := v.Authenticate(r); err != nil {
			b.Fatal(err)
		}
	}
}
