package s3server_test

import (
	"bufio"
	"bytes"
	"crypto/md5"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/xml"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/sharq-dev/sharq/internal/access/sigv4"
	"github.com/sharq-dev/sharq/internal/testwait"
)

// request builds a request to the server signed with alice's key; hash is
// its X-Amz-Content-Sha256 ("" for the body's SHA-256).
func (e *env) request(t *testing.T, method, path string, body []byte, hash string, header map[string]string) *http.Request {
	t.Helper()
	r, err := http.NewRequest(method, e.url+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body == nil {
		r.Body, r.ContentLength = http.NoBody, 0
	}
	for k, v := range header {
		r.Header.Set(k, v)
	}
	if hash == "" {
		sum := sha256.Sum256(body)
		hash = hex.EncodeToString(sum[:])
	}
	r.Header.Set("X-Amz-Content-Sha256", hash)
	err = v4.NewSigner().SignHTTP(t.Context(), aws.Credentials{AccessKeyID: keyID, SecretAccessKey: secret}, r, hash, "s3", "us-east-1",
		time.Now(), func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true })
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// do sends r and returns its status and S3 error code.
func (e *env) do(t *testing.T, r *http.Request) (int, string) {
	t.Helper()
	resp, err := e.http.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct{ Code string }
	xml.NewDecoder(resp.Body).Decode(&body)
	return resp.StatusCode, body.Code
}

func (e *env) mustBucket(t *testing.T, name string) {
	t.Helper()
	_, err := e.client.CreateBucket(t.Context(), &s3.CreateBucketInput{Bucket: aws.String(name)})
	fatalIf(t, "create bucket "+name, err)
}

// Ensure requests S3 refuses get S3's codes and store nothing.
func TestBadInput(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.mustBucket(t, "data")
	body := []byte("hello world")
	md5sum := md5.Sum([]byte("other"))
	cases := map[string]struct {
		method, path string
		body         []byte
		header       map[string]string
		hash         string
		wantStatus   int
		wantCode     string
	}{
		"unknown bucket":      {method: "GET", path: "/nobucket/key", wantStatus: 404, wantCode: "NoSuchBucket"},
		"unknown bucket list": {method: "GET", path: "/nobucket?list-type=2", wantStatus: 404, wantCode: "NoSuchBucket"},
		"unknown key":         {method: "GET", path: "/data/nokey", wantStatus: 404, wantCode: "NoSuchKey"},
		"uppercase bucket":    {method: "PUT", path: "/Data", wantStatus: 400, wantCode: "InvalidBucketName"},
		"short bucket":        {method: "PUT", path: "/ab", wantStatus: 400, wantCode: "InvalidBucketName"},
		"ip bucket":           {method: "PUT", path: "/192.168.1.1", wantStatus: 400, wantCode: "InvalidBucketName"},
		"dots bucket":         {method: "PUT", path: "/a..b", wantStatus: 400, wantCode: "InvalidBucketName"},
		"underscore bucket":   {method: "PUT", path: "/my_bucket", wantStatus: 400, wantCode: "InvalidBucketName"},
		"bucket again":        {method: "PUT", path: "/data", wantStatus: 409, wantCode: "BucketAlreadyOwnedByYou"},
		"key too long":        {method: "PUT", path: "/data/" + strings.Repeat("k", 1025), body: body, wantStatus: 400, wantCode: "KeyTooLongError"},
		"bad content-md5":     {method: "PUT", path: "/data/k", body: body, header: map[string]string{"Content-MD5": base64.StdEncoding.EncodeToString(md5sum[:])}, wantStatus: 400, wantCode: "BadDigest"},
		"bad crc32": {method: "PUT", path: "/data/k", body: body, header: map[string]string{"X-Amz-Checksum-Crc32": "AAAAAA==", "X-Amz-Sdk-Checksum-Algorithm": "CRC32"},
			wantStatus: 400, wantCode: "BadDigest"},
		"wrong signed hash":  {method: "PUT", path: "/data/k", body: body, hash: strings.Repeat("0", 64), wantStatus: 400, wantCode: "XAmzContentSHA256Mismatch"},
		"no such upload":     {method: "PUT", path: "/data/k?partNumber=1&uploadId=0123456789abcdef0123456789abcdef", body: body, wantStatus: 404, wantCode: "NoSuchUpload"},
		"upload id escapes":  {method: "PUT", path: "/data/k?partNumber=1&uploadId=" + url.QueryEscape("../../buckets/data"), body: body, wantStatus: 404, wantCode: "NoSuchUpload"},
		"abort no upload":    {method: "DELETE", path: "/data/k?uploadId=0123456789abcdef0123456789abcdef", wantStatus: 404, wantCode: "NoSuchUpload"},
		"range past the end": {method: "GET", path: "/data/present", header: map[string]string{"Range": "bytes=100-"}, wantStatus: 416, wantCode: "InvalidRange"},
		"decoded length lies": {method: "PUT", path: "/data/k", body: []byte("5\r\nhello\r\n0\r\n\r\n"), hash: sigv4.StreamingUnsignedTrailer,
			header: map[string]string{"Content-Encoding": "aws-chunked", "X-Amz-Decoded-Content-Length": "9"}, wantStatus: 400, wantCode: "IncompleteBody"},
		"framing not signed": {method: "PUT", path: "/data/k", body: []byte("5\r\nhello\r\n0\r\n\r\n"),
			header: map[string]string{"Content-Encoding": "aws-chunked", "X-Amz-Decoded-Content-Length": "5"}, wantStatus: 400, wantCode: "InvalidArgument"},
		"bad trailer crc32": {method: "PUT", path: "/data/k", body: []byte("5\r\nhello\r\n0\r\nx-amz-checksum-crc32:AAAAAA==\r\n\r\n"), hash: sigv4.StreamingUnsignedTrailer,
			header:     map[string]string{"Content-Encoding": "aws-chunked", "X-Amz-Decoded-Content-Length": "5", "X-Amz-Trailer": "x-amz-checksum-crc32"},
			wantStatus: 400, wantCode: "BadDigest"},
	}
	_, err := e.client.PutObject(t.Context(), &s3.PutObjectInput{Bucket: aws.String("data"), Key: aws.String("present"), Body: strings.NewReader("tiny")})
	fatalIf(t, "put", err)
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			status, code := e.do(t, e.request(t, tc.method, tc.path, tc.body, tc.hash, tc.header))
			if status != tc.wantStatus || code != tc.wantCode {
				t.Fatalf("got %d %s, want %d %s", status, code, tc.wantStatus, tc.wantCode)
			}
		})
	}
	// None of those stored an object "k", nor left a body behind.
	if _, err := e.client.HeadObject(t.Context(), &s3.HeadObjectInput{Bucket: aws.String("data"), Key: aws.String("k")}); err == nil {
		t.Error("a refused PUT stored its object")
	}
	wantNoTemp(t, e.dir)
}

// Ensure a good aws-chunked body with a trailing CRC32, as boto3 sends it
// over HTTPS, is stored decoded.
func TestUnsignedTrailer(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.mustBucket(t, "data")
	sum := crc32.ChecksumIEEE([]byte("hello world"))
	crc := base64.StdEncoding.EncodeToString([]byte{byte(sum >> 24), byte(sum >> 16), byte(sum >> 8), byte(sum)})
	chunked := "6\r\nhello \r\n5\r\nworld\r\n0\r\nx-amz-checksum-crc32:" + crc + "\r\n\r\n"
	status, code := e.do(t, e.request(t, "PUT", "/data/k", []byte(chunked), sigv4.StreamingUnsignedTrailer, map[string]string{
		"Content-Encoding": "aws-chunked", "X-Amz-Decoded-Content-Length": "11", "X-Amz-Trailer": "x-amz-checksum-crc32"}))
	if status != 200 {
		t.Fatalf("put: %d %s", status, code)
	}
	if got := e.get(t, "data", "k"); got != "hello world" {
		t.Fatalf("stored %q", got)
	}
}

func (e *env) get(t *testing.T, bucket, key string) string {
	t.Helper()
	out, err := e.client.GetObject(t.Context(), &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	fatalIf(t, "get "+key, err)
	defer out.Body.Close()
	b, err := io.ReadAll(out.Body)
	fatalIf(t, "read "+key, err)
	return string(b)
}

// Ensure keys that look like paths out of the bucket (.., absolute, empty
// segments) are objects like any other, stored inside the bucket's
// directory and listed under their own names.
func TestPathTraversalKeys(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.mustBucket(t, "data")
	e.mustBucket(t, "other")
	keys := []string{"../other/escaped", "../../../../tmp/escaped", "/absolute", "a/../../b", ".", "..", "a//b", "a/./b", "%2e%2e/x", "dir/", "a#o/b"}
	for _, k := range keys {
		_, err := e.client.PutObject(t.Context(), &s3.PutObjectInput{Bucket: aws.String("data"), Key: aws.String(k), Body: strings.NewReader("v:" + k)})
		fatalIf(t, "put "+k, err)
	}
	for _, k := range keys {
		if got := e.get(t, "data", k); got != "v:"+k {
			t.Errorf("get %q = %q", k, got)
		}
	}
	out, err := e.client.ListObjectsV2(t.Context(), &s3.ListObjectsV2Input{Bucket: aws.String("other")})
	fatalIf(t, "list other", err)
	if len(out.Contents) != 0 {
		t.Errorf("bucket other holds %d objects", len(out.Contents))
	}
	bucketDir := filepath.Join(e.dir, "buckets", "data")
	filepath.WalkDir(e.dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() != "#bucket" && !strings.HasPrefix(path, bucketDir+string(filepath.Separator)) {
			t.Errorf("file outside the bucket: %s", path)
		}
		return nil
	})
	var listed []string
	p := s3.NewListObjectsV2Paginator(e.client, &s3.ListObjectsV2Input{Bucket: aws.String("data")})
	for p.HasMorePages() {
		page, err := p.NextPage(t.Context())
		fatalIf(t, "list", err)
		for _, o := range page.Contents {
			listed = append(listed, *o.Key)
		}
	}
	if len(listed) != len(keys) {
		t.Errorf("listed %q, want the %d keys put", listed, len(keys))
	}
	for i := 1; i < len(listed); i++ {
		if listed[i-1] >= listed[i] {
			t.Errorf("list out of order: %q before %q", listed[i-1], listed[i])
		}
	}
}

// Ensure a body cut short (the client gone, as a killed process) leaves
// no object and no temporary file; and a server started over a directory
// where one was killed mid-body removes what was left.
func TestCutBody(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.mustBucket(t, "data")
	r := e.request(t, "PUT", "/data/cut", []byte(strings.Repeat("x", 1000)), sigv4.UnsignedPayload, nil)
	u, _ := url.Parse(e.url)
	conn, err := net.Dial("tcp", u.Host)
	fatalIf(t, "dial", err)
	fmt.Fprintf(conn, "PUT /data/cut HTTP/1.1\r\nHost: %s\r\nContent-Length: 1000\r\n", u.Host)
	for k, v := range r.Header {
		fmt.Fprintf(conn, "%s: %s\r\n", k, v[0])
	}
	fmt.Fprintf(conn, "\r\n%s", strings.Repeat("x", 500))
	conn.(*net.TCPConn).CloseWrite()
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err == nil {
		var body struct{ Code string }
		xml.NewDecoder(resp.Body).Decode(&body)
		if body.Code != "IncompleteBody" {
			t.Errorf("cut body answered %d %s, want IncompleteBody", resp.StatusCode, body.Code)
		}
	}
	conn.Close()
	if _, err := e.client.HeadObject(t.Context(), &s3.HeadObjectInput{Bucket: aws.String("data"), Key: aws.String("cut")}); err == nil {
		t.Fatal("a cut body became an object")
	}
	wantNoTemp(t, e.dir)
}

// wantNoTemp fails when a body being received is left in dir's tmp.
func wantNoTemp(t *testing.T, dir string) {
	t.Helper()
	// The handler removes its file once it saw the body fail; give it the
	// moment it takes after the answer.
	testwait.Until(t, 5*time.Second, func() error {
		if left, _ := os.ReadDir(filepath.Join(dir, "tmp")); len(left) > 0 {
			return fmt.Errorf("left in tmp: %v", left)
		}
		return nil
	})
}

// Ensure a bucket addressed virtual-hosted style (BUCKET.localhost) is
// the same bucket as path-style.
func TestVirtualHosted(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.mustBucket(t, "data")
	body := []byte("virtual")
	r, err := http.NewRequest("PUT", e.url+"/dir/v.txt", bytes.NewReader(body))
	fatalIf(t, "request", err)
	r.Host = "data.localhost"
	sum := sha256.Sum256(body)
	r.Header.Set("X-Amz-Content-Sha256", hex.EncodeToString(sum[:]))
	err = v4.NewSigner().SignHTTP(t.Context(), aws.Credentials{AccessKeyID: keyID, SecretAccessKey: secret}, r, hex.EncodeToString(sum[:]), "s3", "us-east-1",
		time.Now(), func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true })
	fatalIf(t, "sign", err)
	if status, code := e.do(t, r); status != http.StatusOK {
		t.Fatalf("virtual-hosted PUT: %d %s", status, code)
	}
	if got := e.get(t, "data", "dir/v.txt"); got != "virtual" {
		t.Fatalf("path-style GET: %q", got)
	}
}

// Ensure what a killed server left half received is removed when the next
// one starts over the same directory, and the objects stay; a body another
// server (sharing the data dir) is writing now is not.
func TestLeftoversRemovedAtStart(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.mustBucket(t, "data")
	_, err := e.client.PutObject(t.Context(), &s3.PutObjectInput{Bucket: aws.String("data"), Key: aws.String("kept"), Body: strings.NewReader("kept")})
	fatalIf(t, "put", err)
	left, live := filepath.Join(e.dir, "tmp", "body-killed"), filepath.Join(e.dir, "tmp", "body-live")
	fatalIf(t, "write leftover", os.WriteFile(left, []byte("half an object"), 0o644))
	fatalIf(t, "write live", os.WriteFile(live, []byte("being written"), 0o644))
	long := time.Now().Add(-2 * time.Hour)
	fatalIf(t, "age leftover", os.Chtimes(left, long, long))
	again := newEnvOn(t, e.dir)
	if _, err := os.Stat(left); !os.IsNotExist(err) {
		t.Fatalf("the leftover body is still there: %v", err)
	}
	if _, err := os.Stat(live); err != nil {
		t.Fatalf("a body being written was removed: %v", err)
	}
	os.Remove(live)
	if got := again.get(t, "data", "kept"); got != "kept" {
		t.Fatalf("object after restart: %q", got)
	}
}
