package s3server_test

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	tm "github.com/aws/aws-sdk-go-v2/feature/s3/transfermanager"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/google/go-cmp/cmp"

	"github.com/sharq-dev/sharq/internal/access/sigv4"
)

// Ensure the AWS SDK for Go's S3 client and transfer manager work against
// the server over HTTP and HTTPS: over HTTPS the SDK sends its bodies
// aws-chunked with a trailing CRC32 (STREAMING-UNSIGNED-PAYLOAD-TRAILER),
// which must be stored decoded.
func TestSDKRoundTrip(t *testing.T) {
	for _, useTLS := range []bool{false, true} {
		name := map[bool]string{false: "http", true: "https"}[useTLS]
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, envOptions{tls: useTLS})
			c, ctx := e.client, t.Context()
			_, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("data")})
			fatalIf(t, "create bucket", err)
			_, err = c.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String("data")})
			fatalIf(t, "head bucket", err)
			lb, err := c.ListBuckets(ctx, &s3.ListBucketsInput{})
			fatalIf(t, "list buckets", err)
			if len(lb.Buckets) != 1 || *lb.Buckets[0].Name != "data" {
				t.Fatalf("buckets %v", lb.Buckets)
			}
			keys := []string{"train/a.csv", "train/b.csv", "train/sub/c.csv", "test/d.csv", "top.txt", "a key with spaces+plus&"}
			for _, k := range keys {
				_, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("data"), Key: aws.String(k),
					Body: strings.NewReader("content of " + k), ContentType: aws.String("text/csv"),
					Metadata: map[string]string{"owner": "team-a"}})
				fatalIf(t, "put "+k, err)
			}
			got, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("data"), Key: aws.String("train/a.csv")})
			fatalIf(t, "get", err)
			b, _ := io.ReadAll(got.Body)
			if string(b) != "content of train/a.csv" || *got.ContentType != "text/csv" || got.Metadata["owner"] != "team-a" {
				t.Fatalf("got %q type %q meta %v", b, *got.ContentType, got.Metadata)
			}
			rng, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("data"), Key: aws.String("train/a.csv"), Range: aws.String("bytes=11-15")})
			fatalIf(t, "ranged get", err)
			b, _ = io.ReadAll(rng.Body)
			if string(b) != "train" || *rng.ContentRange != "bytes 11-15/22" {
				t.Fatalf("range: %q, %q", b, *rng.ContentRange)
			}
			head, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("data"), Key: aws.String("top.txt")})
			fatalIf(t, "head", err)
			if *head.ContentLength != int64(len("content of top.txt")) {
				t.Fatalf("head length %d", *head.ContentLength)
			}

			// Paging two at a time, with and without a delimiter.
			if diff := cmp.Diff([]string{"a key with spaces+plus&", "test/d.csv", "top.txt", "train/a.csv", "train/b.csv", "train/sub/c.csv"},
				listAll(t, c, "", "")); diff != "" {
				t.Errorf("list (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{"a key with spaces+plus&", "test/", "top.txt", "train/"}, listAll(t, c, "", "/")); diff != "" {
				t.Errorf("list / (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{"train/a.csv", "train/b.csv", "train/sub/"}, listAll(t, c, "train/", "/")); diff != "" {
				t.Errorf("list train/ / (-want +got):\n%s", diff)
			}

			// A multipart upload by the transfer manager, read back by ranges.
			big := bytes.Repeat([]byte("0123456789abcdef"), 21<<20/16) // 21 MiB: three 8 MiB parts
			up := tm.New(c, func(o *tm.Options) { o.PartSizeBytes = 8 << 20 })
			_, err = up.UploadObject(ctx, &tm.UploadObjectInput{Bucket: aws.String("data"), Key: aws.String("model/model.tar.gz"), Body: bytes.NewReader(big)})
			fatalIf(t, "multipart upload", err)
			var out bytes.Buffer
			dl, err := up.GetObject(ctx, &tm.GetObjectInput{Bucket: aws.String("data"), Key: aws.String("model/model.tar.gz")})
			fatalIf(t, "download", err)
			io.Copy(&out, dl.Body)
			if sha256.Sum256(out.Bytes()) != sha256.Sum256(big) {
				t.Fatalf("multipart object: %d bytes back, %d sent, or other bytes", out.Len(), len(big))
			}
			hd, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("data"), Key: aws.String("model/model.tar.gz")})
			fatalIf(t, "head multipart", err)
			if !strings.HasSuffix(*hd.ETag, `-3"`) {
				t.Errorf("multipart ETag %s, want one ending -3", *hd.ETag)
			}

			if useTLS && !e.sawPayload(sigv4.StreamingUnsignedTrailer) {
				t.Errorf("no aws-chunked body with a trailer came over TLS: the test no longer covers it")
			}

			// Deletes: the bucket refuses to go while it holds objects.
			_, err = c.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String("data")})
			if code(err) != "BucketNotEmpty" {
				t.Fatalf("delete non-empty bucket: %v", err)
			}
			_, err = c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("data"), Key: aws.String("top.txt")})
			fatalIf(t, "delete", err)
			var ids []types.ObjectIdentifier
			for _, k := range append(slices.DeleteFunc(keys, func(k string) bool { return k == "top.txt" }), "model/model.tar.gz") {
				ids = append(ids, types.ObjectIdentifier{Key: aws.String(k)})
			}
			del, err := c.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: aws.String("data"), Delete: &types.Delete{Objects: ids}})
			fatalIf(t, "delete objects", err)
			if len(del.Deleted) != len(ids) || len(del.Errors) != 0 {
				t.Fatalf("delete objects: %d deleted, errors %v", len(del.Deleted), del.Errors)
			}
			_, err = c.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String("data")})
			fatalIf(t, "delete bucket", err)
			_, err = c.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String("data")})
			if err == nil {
				t.Fatal("bucket still there")
			}
		})
	}
}

// listAll lists the keys and common prefixes under prefix, two a page.
func listAll(t *testing.T, c *s3.Client, prefix, delim string) []string {
	t.Helper()
	in := &s3.ListObjectsV2Input{Bucket: aws.String("data"), MaxKeys: aws.Int32(2), Prefix: aws.String(prefix)}
	if delim != "" {
		in.Delimiter = aws.String(delim)
	}
	var all []string
	p := s3.NewListObjectsV2Paginator(c, in)
	for p.HasMorePages() {
		page, err := p.NextPage(t.Context())
		fatalIf(t, "list", err)
		for _, o := range page.Contents {
			all = append(all, *o.Key)
		}
		for _, cp := range page.CommonPrefixes {
			all = append(all, *cp.Prefix)
		}
	}
	slices.Sort(all)
	return all
}

func fatalIf(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// Ensure ListObjects (version 1) pages by marker, and encoding-type=url
// escapes the keys and prefixes (boto3 decodes them as url.QueryUnescape
// does; the AWS SDK for Go leaves them to the caller).
func TestListObjectsV1AndURLEncoding(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.mustBucket(t, "data")
	keys := []string{"a b/1", "a b/2", "c+d", "e%f", "é/x"}
	for _, k := range keys {
		_, err := e.client.PutObject(t.Context(), &s3.PutObjectInput{Bucket: aws.String("data"), Key: aws.String(k), Body: strings.NewReader(k)})
		fatalIf(t, "put "+k, err)
	}
	var got []string
	marker := ""
	for pages := 0; ; pages++ {
		out, err := e.client.ListObjects(t.Context(), &s3.ListObjectsInput{Bucket: aws.String("data"), MaxKeys: aws.Int32(2),
			Marker: aws.String(marker), EncodingType: types.EncodingTypeUrl})
		fatalIf(t, "list", err)
		for _, o := range out.Contents {
			k, err := url.QueryUnescape(*o.Key)
			fatalIf(t, "unescape", err)
			got = append(got, k)
			marker = k
		}
		if !aws.ToBool(out.IsTruncated) {
			break
		}
		if pages > 5 {
			t.Fatal("ListObjects does not end")
		}
	}
	if diff := cmp.Diff(keys, got); diff != "" {
		t.Errorf("ListObjects (-want +got):\n%s", diff)
	}
	v2, err := e.client.ListObjectsV2(t.Context(), &s3.ListObjectsV2Input{Bucket: aws.String("data"), Delimiter: aws.String("/"),
		EncodingType: types.EncodingTypeUrl})
	fatalIf(t, "list v2", err)
	var prefixes []string
	for _, p := range v2.CommonPrefixes {
		d, err := url.QueryUnescape(*p.Prefix)
		fatalIf(t, "unescape", err)
		prefixes = append(prefixes, d)
	}
	if diff := cmp.Diff([]string{"a b/", "é/"}, prefixes); diff != "" {
		t.Errorf("common prefixes (-want +got):\n%s", diff)
	}
}

// Ensure a presigned GET (the SDK's presign client, as a notebook hands a
// model's URL to a browser) reads the object, and one whose signature was
// altered is refused.
func TestPresignedGet(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.mustBucket(t, "data")
	_, err := e.client.PutObject(t.Context(), &s3.PutObjectInput{Bucket: aws.String("data"), Key: aws.String("model/model.tar.gz"), Body: strings.NewReader("model")})
	fatalIf(t, "put", err)
	req, err := s3.NewPresignClient(e.client).PresignGetObject(t.Context(), &s3.GetObjectInput{Bucket: aws.String("data"), Key: aws.String("model/model.tar.gz")})
	fatalIf(t, "presign", err)
	resp, err := e.http.Get(req.URL)
	fatalIf(t, "get", err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(b) != "model" {
		t.Fatalf("presigned GET: %d %q", resp.StatusCode, b)
	}
	u, err := url.Parse(req.URL)
	fatalIf(t, "parse", err)
	q := u.Query()
	sig := q.Get("X-Amz-Signature")
	q.Set("X-Amz-Signature", strings.Repeat("0", len(sig)))
	u.RawQuery = q.Encode()
	resp, err = e.http.Get(u.String())
	fatalIf(t, "get", err)
	resp.Body.Close()
	if resp.StatusCode != 403 {
		t.Fatalf("altered presigned GET: %d", resp.StatusCode)
	}
}

// Ensure CopyObject copies data and headers (or replaces the headers), and
// UploadPartCopy builds a multipart object from ranges of another, as the
// AWS CLI copies within S3.
func TestCopy(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.mustBucket(t, "data")
	c, ctx := e.client, t.Context()
	big := bytes.Repeat([]byte("0123456789"), 6<<20/10+1) // just over 6 MiB
	_, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("data"), Key: aws.String("src/big"), Body: bytes.NewReader(big),
		ContentType: aws.String("text/plain"), Metadata: map[string]string{"team": "a"}})
	fatalIf(t, "put", err)
	_, err = c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("data"), Key: aws.String("dst/same"), CopySource: aws.String("data/src/big")})
	fatalIf(t, "copy", err)
	got, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("data"), Key: aws.String("dst/same")})
	fatalIf(t, "get copy", err)
	b, _ := io.ReadAll(got.Body)
	if !bytes.Equal(b, big) || aws.ToString(got.ContentType) != "text/plain" || got.Metadata["team"] != "a" {
		t.Fatalf("copy: %d bytes, type %q, meta %v", len(b), aws.ToString(got.ContentType), got.Metadata)
	}
	_, err = c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("data"), Key: aws.String("dst/replaced"), CopySource: aws.String("data/src/big"),
		MetadataDirective: types.MetadataDirectiveReplace, ContentType: aws.String("application/x-new")})
	fatalIf(t, "copy replacing", err)
	head, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("data"), Key: aws.String("dst/replaced")})
	fatalIf(t, "head", err)
	if aws.ToString(head.ContentType) != "application/x-new" || len(head.Metadata) != 0 {
		t.Fatalf("replaced headers: type %q, meta %v", aws.ToString(head.ContentType), head.Metadata)
	}
	_, err = c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("data"), Key: aws.String("dst/x"), CopySource: aws.String("data/nothing")})
	if code(err) != "NoSuchKey" {
		t.Fatalf("copy of a missing source: %v", err)
	}

	up, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("data"), Key: aws.String("dst/parts")})
	fatalIf(t, "create upload", err)
	var parts []types.CompletedPart
	for i, rng := range []string{"bytes=0-5242879", fmt.Sprintf("bytes=5242880-%d", len(big)-1)} {
		out, err := c.UploadPartCopy(ctx, &s3.UploadPartCopyInput{Bucket: aws.String("data"), Key: aws.String("dst/parts"), UploadId: up.UploadId,
			PartNumber: aws.Int32(int32(i + 1)), CopySource: aws.String("data/src/big"), CopySourceRange: aws.String(rng)})
		fatalIf(t, "upload part copy", err)
		parts = append(parts, types.CompletedPart{PartNumber: aws.Int32(int32(i + 1)), ETag: out.CopyPartResult.ETag})
	}
	_, err = c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String("data"), Key: aws.String("dst/parts"),
		UploadId: up.UploadId, MultipartUpload: &types.CompletedMultipartUpload{Parts: parts}})
	fatalIf(t, "complete", err)
	if got := e.get(t, "data", "dst/parts"); got != string(big) {
		t.Fatalf("part copy: %d bytes, want %d", len(got), len(big))
	}
}
