package s3data

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/google/go-cmp/cmp"

	"github.com/sharq-dev/sharq/internal/s3data/s3test"
)

// writeTree creates files (relative path -> content) below a new directory.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for rel, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// untar reads a gzipped tar into name -> content, directories as "<dir>".
func untar(t *testing.T, r io.Reader) map[string]string {
	t.Helper()
	zr, err := gzip.NewReader(r)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	got := map[string]string{}
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return got
		}
		if err != nil {
			t.Fatal(err)
		}
		if hdr.Typeflag == tar.TypeDir {
			got[hdr.Name] = "<dir>"
			continue
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		got[hdr.Name] = string(b)
	}
}

func getObject(t *testing.T, c *s3.Client, bucket, key string) (body []byte, etag string) {
	t.Helper()
	out, err := c.GetObject(context.Background(), &s3.GetObjectInput{Bucket: &bucket, Key: &key})
	if err != nil {
		t.Fatalf("get s3://%s/%s: %v", bucket, key, err)
	}
	defer out.Body.Close()
	body, err = io.ReadAll(out.Body)
	if err != nil {
		t.Fatal(err)
	}
	return body, aws.ToString(out.ETag)
}

func listAll(t *testing.T, c *s3.Client, bucket string) map[string]string {
	t.Helper()
	got := map[string]string{}
	out, err := c.ListObjectsV2(context.Background(), &s3.ListObjectsV2Input{Bucket: &bucket})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range out.Contents {
		body, _ := getObject(t, c, bucket, aws.ToString(o.Key))
		got[aws.ToString(o.Key)] = string(body)
	}
	return got
}

// Two hosts' model directories, as a two-host job leaves them.
func hostDirs(t *testing.T, large string) []string {
	return []string{
		writeTree(t, map[string]string{"a.txt": "from host 1", "common.txt": "host 1", "sub/x.txt": "x", "clash": "a file on host 1"}),
		writeTree(t, map[string]string{"b.txt": "from host 2", "common.txt": "host 2", "clash/y.txt": "y", "large.bin": large}),
	}
}

func TestUploadArchiveMergesHostsIntoOneTarGz(t *testing.T) {
	endpoint, c := server(t)
	b := newBucket(t, c)
	large := string(randomBytes(t, 40<<20)) // beyond the multipart threshold
	dirs := hostDirs(t, large)
	s := newStore(t, endpoint, nil)
	if err := s.UploadArchive(context.Background(), "s3://"+b+"/job/output/model.tar.gz", dirs, true); err != nil {
		t.Fatal(err)
	}
	body, etag := getObject(t, c, b, "job/output/model.tar.gz")
	if !strings.Contains(etag, "-") {
		t.Errorf("ETag %s is not a multipart upload's", etag)
	}
	want := map[string]string{
		"a.txt": "from host 1", "b.txt": "from host 2", "common.txt": "host 2",
		"sub/": "<dir>", "sub/x.txt": "x", "clash/": "<dir>", "clash/y.txt": "y", "large.bin": large,
	}
	got := untar(t, strings.NewReader(string(body)))
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("archive (-want +got):\n%s", diff)
	}
}

func TestUploadArchiveNoneUploadsFilesAsTheyAre(t *testing.T) {
	endpoint, c := server(t)
	b := newBucket(t, c)
	dirs := hostDirs(t, "L")
	dirs = append(dirs, filepath.Join(t.TempDir(), "missing")) // a host that wrote nothing
	s := newStore(t, endpoint, nil)
	if err := s.UploadArchive(context.Background(), "s3://"+b+"/job/output/model", dirs, false); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"job/output/model/a.txt": "from host 1", "job/output/model/b.txt": "from host 2",
		"job/output/model/common.txt": "host 2", "job/output/model/sub/x.txt": "x",
		"job/output/model/clash/y.txt": "y", "job/output/model/large.bin": "L",
	}
	if diff := cmp.Diff(want, listAll(t, c, b)); diff != "" {
		t.Errorf("objects (-want +got):\n%s", diff)
	}
}

func TestUploadArchiveErrors(t *testing.T) {
	endpoint, _ := server(t)
	s := newStore(t, endpoint, nil)
	err := s.UploadArchive(context.Background(), "s3://no-such-bucket-here/m.tar.gz", []string{writeTree(t, map[string]string{"a": "a"})}, true)
	want := "upload s3://no-such-bucket-here/m.tar.gz: bucket no-such-bucket-here does not exist"
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}

// TestUploadDirDownloadDirRoundTrip syncs checkpoints up twice, the second
// time with a file deleted and one added, and restores them.
func TestUploadDirDownloadDirRoundTrip(t *testing.T) {
	endpoint, c := server(t)
	b := newBucket(t, c)
	s3test.Put(t, c, b, "ckpt2/other", []byte("beside the prefix, not below it"))
	puts := countRequests(t, endpoint, http.MethodPut)
	s := newStore(t, puts.endpoint, nil)
	ctx := context.Background()
	dir := writeTree(t, map[string]string{"step-1.pt": "1", "sub/opt.pt": "o", "latest.pt": "a"})
	if err := s.UploadDir(ctx, "s3://"+b+"/ckpt", dir); err != nil {
		t.Fatal(err)
	}
	if n := len(puts.take()); n != 3 {
		t.Errorf("first sync uploaded %d files, want 3", n)
	}
	if err := os.Remove(filepath.Join(dir, "step-1.pt")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "step-2.pt"), []byte("2"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Same size, new content: the modification time tells the change.
	later := time.Now().Add(time.Second)
	if err := os.WriteFile(filepath.Join(dir, "latest.pt"), []byte("b"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(filepath.Join(dir, "latest.pt"), later, later); err != nil {
		t.Fatal(err)
	}
	if err := s.UploadDir(ctx, "s3://"+b+"/ckpt/", dir); err != nil {
		t.Fatal(err)
	}
	wantPuts := []string{"/" + b + "/ckpt/latest.pt", "/" + b + "/ckpt/step-2.pt"}
	if diff := cmp.Diff(wantPuts, slices.Sorted(maps.Keys(puts.take()))); diff != "" {
		t.Errorf("second sync uploaded (-want +got):\n%s", diff)
	}
	// An object removed behind the Store's back is uploaded again.
	if _, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &b, Key: aws.String("ckpt/sub/opt.pt")}); err != nil {
		t.Fatal(err)
	}
	if err := s.UploadDir(ctx, "s3://"+b+"/ckpt/", dir); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"/" + b + "/ckpt/sub/opt.pt"}, slices.Sorted(maps.Keys(puts.take()))); diff != "" {
		t.Errorf("third sync uploaded (-want +got):\n%s", diff)
	}
	want := map[string]string{"ckpt/latest.pt": "b", "ckpt/step-2.pt": "2", "ckpt/sub/opt.pt": "o", "ckpt2/other": "beside the prefix, not below it"}
	if diff := cmp.Diff(want, listAll(t, c, b)); diff != "" {
		t.Errorf("objects (-want +got):\n%s", diff)
	}

	restored := filepath.Join(t.TempDir(), "checkpoints")
	if err := s.DownloadDir(ctx, "s3://"+b+"/ckpt", restored); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"latest.pt": "b", "step-2.pt": "2", "sub/opt.pt": "o"}, tree(t, restored)); diff != "" {
		t.Errorf("restored (-want +got):\n%s", diff)
	}

	// A first attempt has no checkpoints: an empty directory, no error.
	empty := filepath.Join(t.TempDir(), "checkpoints")
	if err := s.DownloadDir(ctx, "s3://"+b+"/never-written/", empty); err != nil {
		t.Fatal(err)
	}
	if entries, err := os.ReadDir(empty); err != nil || len(entries) != 0 {
		t.Errorf("restore of a missing prefix gave %v, %v; want an empty directory", entries, err)
	}

	err := s.DownloadDir(ctx, "s3://no-such-bucket-here/ckpt", empty)
	if err == nil || !strings.HasSuffix(err.Error(), ": bucket no-such-bucket-here does not exist") {
		t.Errorf("restore from a missing bucket gave %v", err)
	}
}

// TestLocalURIs runs every operation against file:// URIs and absolute paths.
func TestLocalURIs(t *testing.T) {
	s := newStore(t, "", nil) // no S3 is touched
	ctx := context.Background()
	src := writeTree(t, map[string]string{"a": "a", "d/b": "b", "d/e/c": "c", "z": "z"})

	for _, uri := range []string{"file://" + src, src} {
		dst := filepath.Join(t.TempDir(), "train")
		if err := s.Stage(ctx, Channel{Name: "train", URI: uri}, 0, 1, dst, nil); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tree(t, src), tree(t, dst)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", uri, diff)
		}
	}
	// Sharded: host 1 of 2 gets the second and fourth in key order.
	dst := filepath.Join(t.TempDir(), "train")
	if err := s.Stage(ctx, Channel{Name: "train", URI: "file://" + src, Distribution: ShardedByS3Key}, 1, 2, dst, nil); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"d/b": "b", "z": "z"}, tree(t, dst)); diff != "" {
		t.Errorf("sharded (-want +got):\n%s", diff)
	}
	// A manifest on disk over a local prefix.
	manifest := filepath.Join(t.TempDir(), "m.json")
	os.WriteFile(manifest, []byte(`[{"prefix": "file://`+src+`/"}, "d/e/c", "a"]`), 0o644)
	dst = filepath.Join(t.TempDir(), "train")
	if err := s.Stage(ctx, Channel{Name: "train", URI: manifest, DataType: ManifestFile}, 0, 1, dst, nil); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"d/e/c": "c", "a": "a"}, tree(t, dst)); diff != "" {
		t.Errorf("manifest (-want +got):\n%s", diff)
	}
	// A missing directory.
	dst = filepath.Join(t.TempDir(), "train")
	err := s.Stage(ctx, Channel{Name: "train", URI: "file:///no/such/dir"}, 0, 1, dst, nil)
	if err == nil || err.Error() != "channel train: file:///no/such/dir: no such file or directory" {
		t.Errorf("got %v", err)
	}
	assertClean(t, dst)

	// Archives to a directory that does not exist yet.
	dirs := hostDirs(t, "L")
	out := filepath.Join(t.TempDir(), "out", "job", "output")
	if err := s.UploadArchive(ctx, "file://"+out+"/model.tar.gz", dirs, true); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(out, "model.tar.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got := untar(t, f)
	if got["common.txt"] != "host 2" || got["large.bin"] != "L" || len(got) != 8 {
		t.Errorf("local archive holds %v", got)
	}
	if err := s.UploadArchive(ctx, out+"/model", dirs, false); err != nil {
		t.Fatal(err)
	}
	if files := tree(t, filepath.Join(out, "model")); files["common.txt"] != "host 2" || len(files) != 6 {
		t.Errorf("local NONE output holds %v", files)
	}

	// Checkpoint sync to and from a directory, with deletion.
	ckpt := writeTree(t, map[string]string{"1.pt": "1", "s/2.pt": "2"})
	remote := filepath.Join(t.TempDir(), "remote")
	if err := s.UploadDir(ctx, "file://"+remote, ckpt); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(ckpt, "1.pt"))
	if err := s.UploadDir(ctx, "file://"+remote, ckpt); err != nil {
		t.Fatal(err)
	}
	back := filepath.Join(t.TempDir(), "back")
	if err := s.DownloadDir(ctx, "file://"+remote, back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"s/2.pt": "2"}, tree(t, back)); diff != "" {
		t.Errorf("checkpoints (-want +got):\n%s", diff)
	}
	missing := filepath.Join(t.TempDir(), "none")
	if err := s.DownloadDir(ctx, "file:///no/such/dir", missing); err != nil {
		t.Errorf("restore from a missing directory: %v", err)
	}
	if entries, err := os.ReadDir(missing); err != nil || len(entries) != 0 {
		t.Errorf("restore from a missing directory gave %v, %v; want an empty directory", entries, err)
	}
}
