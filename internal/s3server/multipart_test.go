package s3server_test

import (
	"bytes"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// clock is a settable time.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Set(t time.Time) { c.mu.Lock(); defer c.mu.Unlock(); c.now = t }

// Ensure a multipart upload never completed is removed with its parts
// once older than the upload TTL (a day), and a fresh one is kept.
func TestAbandonedUploadsCleaned(t *testing.T) {
	clk := &clock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	e := newEnv(t, envOptions{now: clk.Now})
	e.mustBucket(t, "data")
	c, ctx := e.client, t.Context()
	old, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("data"), Key: aws.String("old")})
	fatalIf(t, "create upload", err)
	_, err = c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String("data"), Key: aws.String("old"), UploadId: old.UploadId,
		PartNumber: aws.Int32(1), Body: bytes.NewReader(make([]byte, 1<<20))})
	fatalIf(t, "upload part", err)
	clk.Set(clk.Now().Add(23 * time.Hour))
	fresh, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("data"), Key: aws.String("fresh")})
	fatalIf(t, "create upload", err)

	clk.Set(clk.Now().Add(2 * time.Hour)) // old is 25 h old, fresh 2 h
	n, err := e.srv.CleanUploads()
	fatalIf(t, "clean", err)
	if n != 1 {
		t.Fatalf("removed %d uploads, want 1", n)
	}
	_, err = c.ListParts(ctx, &s3.ListPartsInput{Bucket: aws.String("data"), Key: aws.String("old"), UploadId: old.UploadId})
	if code(err) != "NoSuchUpload" {
		t.Fatalf("old upload after clean-up: %v", err)
	}
	if _, err := os.Stat(filepath.Join(e.dir, "uploads", *old.UploadId)); !os.IsNotExist(err) {
		t.Fatalf("old upload's parts still on disk: %v", err)
	}
	_, err = c.ListParts(ctx, &s3.ListPartsInput{Bucket: aws.String("data"), Key: aws.String("fresh"), UploadId: fresh.UploadId})
	fatalIf(t, "fresh upload kept", err)
}

// Ensure CompleteMultipartUpload checks its parts as S3 does.
func TestCompleteChecks(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.mustBucket(t, "data")
	c, ctx := e.client, t.Context()
	up, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("data"), Key: aws.String("k")})
	fatalIf(t, "create upload", err)
	etags := map[int32]*string{}
	for n := int32(1); n <= 2; n++ {
		out, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String("data"), Key: aws.String("k"), UploadId: up.UploadId,
			PartNumber: aws.Int32(n), Body: bytes.NewReader(bytes.Repeat([]byte{byte(n)}, 1<<20))})
		fatalIf(t, "upload part", err)
		etags[n] = out.ETag
	}
	complete := func(parts ...types.CompletedPart) error {
		_, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String("data"), Key: aws.String("k"),
			UploadId: up.UploadId, MultipartUpload: &types.CompletedMultipartUpload{Parts: parts}})
		return err
	}
	part := func(n int32, etag *string) types.CompletedPart {
		return types.CompletedPart{PartNumber: aws.Int32(n), ETag: etag}
	}
	// In order: each refusal leaves the upload as it was.
	for _, tc := range []struct {
		name  string
		parts []types.CompletedPart
		want  string
	}{
		{"out of order", []types.CompletedPart{part(2, etags[2]), part(1, etags[1])}, "InvalidPartOrder"},
		{"wrong etag", []types.CompletedPart{part(1, etags[2])}, "InvalidPart"},
		{"missing part", []types.CompletedPart{part(3, etags[1])}, "InvalidPart"},
		{"too small", []types.CompletedPart{part(1, etags[1]), part(2, etags[2])}, "EntityTooSmall"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := complete(tc.parts...); code(err) != tc.want {
				t.Fatalf("complete: %v, want %s", err, tc.want)
			}
		})
	}
	// One small part alone is a whole object.
	fatalIf(t, "complete one part", complete(part(1, etags[1])))
	if got := e.get(t, "data", "k"); len(got) != 1<<20 {
		t.Fatalf("object of %d bytes", len(got))
	}
}
