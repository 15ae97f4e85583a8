package s3data

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/google/go-cmp/cmp"

	"github.com/sharq-dev/sharq/internal/s3data/s3test"
)

func TestStagePrefixKeepsNestedPaths(t *testing.T) {
	endpoint, c := server(t)
	b := newBucket(t, c)
	for key, body := range map[string]string{
		"data/train/a.csv":            "a",
		"data/train/sub/b.csv":        "bb",
		"data/train/sub/deeper/c.bin": "ccc",
		"data/train/zero":             "",
		"data/train/folder/":          "", // a console's folder marker
		"data/other/x.csv":            "not in the channel",
	} {
		s3test.Put(t, c, b, key, []byte(body))
	}
	want := map[string]string{"a.csv": "a", "sub/b.csv": "bb", "sub/deeper/c.bin": "ccc", "zero": ""}
	s := newStore(t, endpoint, nil)
	for _, uri := range []string{"s3://" + b + "/data/train", "s3://" + b + "/data/train/"} {
		dst := filepath.Join(t.TempDir(), "input", "data", "train")
		var last Progress
		err := s.Stage(context.Background(), Channel{Name: "train", URI: uri}, 0, 1, dst, func(p Progress) { last = p })
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, tree(t, dst)); diff != "" {
			t.Errorf("%s: staged files (-want +got):\n%s", uri, diff)
		}
		if last != (Progress{Done: 6, Total: 6}) {
			t.Errorf("%s: last progress %+v, want 6 of 6 bytes", uri, last)
		}
	}
}

func TestStageObjectKeyGivesOneFile(t *testing.T) {
	endpoint, c := server(t)
	b := newBucket(t, c)
	s3test.Put(t, c, b, "models/base.bin", []byte("weights"))
	dst := filepath.Join(t.TempDir(), "base")
	if err := newStore(t, endpoint, nil).Stage(context.Background(), Channel{Name: "base", URI: "s3://" + b + "/models/base.bin"}, 0, 1, dst, nil); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"base.bin": "weights"}, tree(t, dst)); diff != "" {
		t.Error(diff)
	}
}

// TestStageShardedGivesDisjointParts stages ten objects on three hosts: sharded,
// the hosts' parts are disjoint, their union is all, and host i holds the
// objects whose index in key order is i mod 3; replicated, each holds all.
func TestStageShardedGivesDisjointParts(t *testing.T) {
	endpoint, c := server(t)
	b := newBucket(t, c)
	all := map[string]string{}
	var keys []string
	for i := range 10 {
		name := fmt.Sprintf("part-%02d", i)
		all[name] = name
		keys = append(keys, name)
		s3test.Put(t, c, b, "shards/"+name, []byte(name))
	}
	s := newStore(t, endpoint, nil)
	union := map[string]string{}
	for host := range 3 {
		dst := filepath.Join(t.TempDir(), "train")
		ch := Channel{Name: "train", URI: "s3://" + b + "/shards/", Distribution: ShardedByS3Key}
		if err := s.Stage(context.Background(), ch, host, 3, dst, nil); err != nil {
			t.Fatal(err)
		}
		got := tree(t, dst)
		want := map[string]string{}
		for i := host; i < len(keys); i += 3 {
			want[keys[i]] = keys[i]
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("host %d (-want +got):\n%s", host, diff)
		}
		for k, v := range got {
			if _, dup := union[k]; dup {
				t.Errorf("%s staged on two hosts", k)
			}
			union[k] = v
		}

		dst = filepath.Join(t.TempDir(), "replicated")
		ch.Distribution = FullyReplicated
		if err := s.Stage(context.Background(), ch, host, 3, dst, nil); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(all, tree(t, dst)); diff != "" {
			t.Errorf("replicated on host %d (-want +got):\n%s", host, diff)
		}
	}
	if diff := cmp.Diff(all, union); diff != "" {
		t.Errorf("union of shards (-want +got):\n%s", diff)
	}
}

func TestStageManifest(t *testing.T) {
	endpoint, c := server(t)
	b := newBucket(t, c)
	for _, k := range []string{"p/a.txt", "p/dir/b.txt", "p/c.txt", "p/unlisted.txt"} {
		s3test.Put(t, c, b, k, []byte(k))
	}
	manifest := fmt.Sprintf(`[{"prefix": "s3://%s/p/"}, "a.txt", "dir/b.txt", "c.txt"]`, b)
	s3test.Put(t, c, b, "manifests/train.json", []byte(manifest))
	s := newStore(t, endpoint, nil)
	ch := Channel{Name: "train", URI: "s3://" + b + "/manifests/train.json", DataType: ManifestFile}

	dst := filepath.Join(t.TempDir(), "train")
	if err := s.Stage(context.Background(), ch, 0, 1, dst, nil); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"a.txt": "p/a.txt", "dir/b.txt": "p/dir/b.txt", "c.txt": "p/c.txt"}
	if diff := cmp.Diff(want, tree(t, dst)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}

	// Sharded in the manifest's order: host 1 of 2 gets the second entry.
	ch.Distribution = ShardedByS3Key
	dst = filepath.Join(t.TempDir(), "train")
	if err := s.Stage(context.Background(), ch, 1, 2, dst, nil); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"dir/b.txt": "p/dir/b.txt"}, tree(t, dst)); diff != "" {
		t.Errorf("host 1 of 2 (-want +got):\n%s", diff)
	}

	// An entry that names no object fails the stage and names the entry.
	s3test.Put(t, c, b, "manifests/bad.json", []byte(fmt.Sprintf(`[{"prefix": "s3://%s/p/"}, "a.txt", "gone.txt"]`, b)))
	ch = Channel{Name: "train", URI: "s3://" + b + "/manifests/bad.json", DataType: ManifestFile}
	dst = filepath.Join(t.TempDir(), "train")
	err := s.Stage(context.Background(), ch, 0, 1, dst, nil)
	wantErr := fmt.Sprintf(`channel train: s3://%s/manifests/bad.json: manifest entry "gone.txt": object not found`, b)
	if err == nil || err.Error() != wantErr {
		t.Errorf("got error %v, want %s", err, wantErr)
	}
	assertClean(t, dst)
}

func TestStageErrorsSayWhatIsWrong(t *testing.T) {
	endpoint, c := server(t)
	b := newBucket(t, c)
	s := newStore(t, endpoint, nil)
	for _, tc := range []struct{ uri, want string }{
		{"s3://no-such-bucket-here/p", "channel train: s3://no-such-bucket-here/p: bucket no-such-bucket-here does not exist"},
		{"s3://" + b + "/nothing/", "channel train: s3://" + b + "/nothing/: no objects under the prefix"},
		{"relative/dir", "channel train: relative/dir: not an s3:// or file:// URI or an absolute path"},
	} {
		dst := filepath.Join(t.TempDir(), "train")
		err := s.Stage(context.Background(), Channel{Name: "train", URI: tc.uri}, 0, 1, dst, nil)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s: got error %v, want %s", tc.uri, err, tc.want)
		}
		assertClean(t, dst)
	}
	s3test.Put(t, c, b, "clash/a", []byte("a file"))
	s3test.Put(t, c, b, "clash/a/b", []byte("below it"))
	dst := filepath.Join(t.TempDir(), "train")
	err := s.Stage(context.Background(), Channel{Name: "train", URI: "s3://" + b + "/clash"}, 0, 1, dst, nil)
	want := "channel train: s3://" + b + "/clash: object clash/a/b needs a as a directory, but object clash/a is that file"
	if err == nil || err.Error() != want {
		t.Errorf("got error %v, want %s", err, want)
	}
	assertClean(t, dst)

	err = s.Stage(context.Background(), Channel{Name: "train", URI: "s3://" + b + "/nothing/"}, 0, 1, filepath.Join(t.TempDir(), "x"), nil)
	if !errors.Is(err, ErrNoObjects) {
		t.Errorf("a missing prefix gave %v, which is not ErrNoObjects", err)
	}
}

func TestStageUnreachableEndpoint(t *testing.T) {
	l := listen(t)
	endpoint := "http://" + l.Addr().String()
	l.Close() // nothing listens there now
	s := newStore(t, endpoint, nil)
	dst := filepath.Join(t.TempDir(), "train")
	start := time.Now()
	err := s.Stage(context.Background(), Channel{Name: "train", URI: "s3://b/p"}, 0, 1, dst, nil)
	want := "channel train: s3://b/p: cannot reach the S3 endpoint " + endpoint + ": connection refused"
	if err == nil || err.Error() != want {
		t.Errorf("got error %v, want %s", err, want)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("took %v to give up", d)
	}
	var attempts *retry.MaxAttemptsError
	if !errors.As(err, &attempts) || attempts.Attempt != maxAttempts {
		t.Errorf("the SDK did not retry %d times: %#v", maxAttempts, attempts)
	}
	assertClean(t, dst)
}

// TestStageAccessDenied signs as an IAM user without a policy on a server
// that enforces IAM.
func TestStageAccessDenied(t *testing.T) {
	t.Parallel()
	// Four requests pass without credentials: the bucket, the object and
	// NewUser's two; every later one is checked.
	endpoint, _ := s3test.StartAuth(t, 4)
	c := s3test.Client(endpoint)
	s3test.Bucket(t, c, "guarded")
	s3test.Put(t, c, "guarded", "p/a", []byte("a"))
	user := s3test.NewUser(t, endpoint, "nobody")
	s := newStore(t, endpoint, func(c *Config) { c.Credentials = user })
	dst := filepath.Join(t.TempDir(), "train")
	err := s.Stage(context.Background(), Channel{Name: "train", URI: "s3://guarded/p"}, 0, 1, dst, nil)
	want := "channel train: s3://guarded/p: access denied"
	if err == nil || err.Error() != want {
		t.Errorf("got error %v, want %s", err, want)
	}
	assertClean(t, dst)
}

// TestStageServerStopped kills the server while a large object downloads: the
// stage fails within the retry bound, says so, and leaves nothing behind.
func TestStageServerStopped(t *testing.T) {
	t.Parallel()
	endpoint, stop := s3test.Start(t)
	c := s3test.Client(endpoint)
	s3test.Bucket(t, c, "big")
	s3test.Put(t, c, "big", "p/large.bin", randomBytes(t, 96<<20))
	cacheDir := t.TempDir()
	s := newStore(t, endpoint, func(c *Config) { c.CacheDir = cacheDir })
	dst := filepath.Join(t.TempDir(), "train")
	var stopped atomic.Bool
	var stoppedAt time.Time
	err := s.Stage(context.Background(), Channel{Name: "train", URI: "s3://big/p/"}, 0, 1, dst, func(p Progress) {
		if p.Done > 0 && p.Done < p.Total && !stopped.Load() {
			stopped.Store(true)
			stoppedAt = time.Now()
			stop()
		}
	})
	if !stopped.Load() {
		t.Fatalf("the download ended (%v) before the test could stop the server", err)
	}
	if err == nil {
		t.Fatal("stage succeeded with the server stopped")
	}
	if d := time.Since(stoppedAt); d > 30*time.Second {
		t.Errorf("took %v after the server stopped to give up", d)
	}
	prefix := "channel train: s3://big/p/: object p/large.bin: "
	if !strings.HasPrefix(err.Error(), prefix) ||
		!strings.Contains(err.Error(), "S3 endpoint "+endpoint) {
		t.Errorf("got error %q, want %q and the endpoint's failure", err, prefix)
	}
	t.Logf("error: %v", err)
	assertClean(t, dst)
	if left, _ := os.ReadDir(filepath.Join(cacheDir, "tmp")); len(left) > 0 {
		t.Errorf("cache temp files left: %v", left)
	}
	if left, _ := os.ReadDir(filepath.Join(cacheDir, "objects")); len(left) > 0 {
		t.Errorf("a failed download was cached: %v", left)
	}
}

// TestStageServerHung freezes the server before a stage: every request
// waits for an answer that never comes, and the stage gives up within the
// bound the read timeout and the retryer's attempts make.
func TestStageServerHung(t *testing.T) {
	t.Parallel()
	srv := s3test.StartServer(t)
	c := s3test.Client(srv.Endpoint)
	s3test.Bucket(t, c, "hung")
	s3test.Put(t, c, "hung", "p/a", []byte("a"))
	s := newStore(t, srv.Endpoint, nil)
	srv.Freeze()
	defer srv.Thaw()
	dst := filepath.Join(t.TempDir(), "train")
	start := time.Now()
	err := s.Stage(context.Background(), Channel{Name: "train", URI: "s3://hung/p/"}, 0, 1, dst, nil)
	want := "channel train: s3://hung/p/: cannot reach the S3 endpoint " + srv.Endpoint + ": timed out"
	if err == nil || err.Error() != want {
		t.Errorf("got error %v, want %s", err, want)
	}
	if d := time.Since(start); d > 45*time.Second {
		t.Errorf("took %v to give up on a hung server", d)
	}
	assertClean(t, dst)
}

func TestStageCanceledCleansUp(t *testing.T) {
	t.Parallel()
	endpoint, c := server(t)
	b := newBucket(t, c)
	s3test.Put(t, c, b, "p/large.bin", randomBytes(t, 64<<20))
	cacheDir := t.TempDir()
	s := newStore(t, endpoint, func(c *Config) { c.CacheDir = cacheDir })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dst := filepath.Join(t.TempDir(), "train")
	err := s.Stage(ctx, Channel{Name: "train", URI: "s3://" + b + "/p/"}, 0, 1, dst, func(p Progress) {
		if p.Done > 0 {
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want a cancellation", err)
	}
	assertClean(t, dst)
	if left, _ := os.ReadDir(filepath.Join(cacheDir, "tmp")); len(left) > 0 {
		t.Errorf("cache temp files left: %v", left)
	}
}

// TestStageCacheHit stages a prefix twice through a proxy that counts GETs:
// the second stage fetches nothing, a changed object is fetched again, and a
// job writing into its channel does not change what the next stage gets.
func TestStageCacheHit(t *testing.T) {
	endpoint, c := server(t)
	b := newBucket(t, c)
	want := map[string]string{}
	for i := range 20 {
		key := fmt.Sprintf("f%02d", i)
		want[key] = strings.Repeat(key, 100)
		s3test.Put(t, c, b, "data/"+key, []byte(want[key]))
	}
	proxy := countRequests(t, endpoint, http.MethodGet)
	s := newStore(t, proxy.endpoint, func(c *Config) { c.CacheDir = t.TempDir() })
	ch := Channel{Name: "train", URI: "s3://" + b + "/data/"}
	stage := func() string {
		dst := filepath.Join(t.TempDir(), "train")
		if err := s.Stage(context.Background(), ch, 0, 1, dst, nil); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, tree(t, dst)); diff != "" {
			t.Fatalf("(-want +got):\n%s", diff)
		}
		return dst
	}

	stage()
	if n := len(proxy.take()); n != 20 {
		t.Errorf("first stage fetched %d objects, want 20", n)
	}
	dst := stage()
	if gets := proxy.take(); len(gets) != 0 {
		t.Errorf("second stage fetched %v, want nothing", slices.Sorted(maps.Keys(gets)))
	}

	// The job overwrites a staged file: the cache keeps the object's content.
	if err := os.WriteFile(filepath.Join(dst, "f00"), []byte("scribbled"), 0o644); err != nil {
		t.Fatal(err)
	}
	want["f01"] = "changed"
	s3test.Put(t, c, b, "data/f01", []byte("changed"))
	stage()
	if diff := cmp.Diff([]string{"/" + b + "/data/f01"}, slices.Sorted(maps.Keys(proxy.take()))); diff != "" {
		t.Errorf("after one object changed, fetched (-want +got):\n%s", diff)
	}
}

// TestCacheEvictsLeastRecentlyUsed bounds the cache at four objects and stages
// A, B, A again, then C: B, the least recently used, is evicted.
func TestCacheEvictsLeastRecentlyUsed(t *testing.T) {
	endpoint, c := server(t)
	b := newBucket(t, c)
	const size = 1000
	for _, set := range []string{"a", "b", "c"} {
		for i := range 2 {
			s3test.Put(t, c, b, fmt.Sprintf("%s/%d", set, i), randomBytes(t, size))
		}
	}
	proxy := countRequests(t, endpoint, http.MethodGet)
	cacheDir := t.TempDir()
	s := newStore(t, proxy.endpoint, func(c *Config) { c.CacheDir, c.CacheBytes = cacheDir, 4*size })
	stage := func(set string) int {
		t.Helper()
		dst := filepath.Join(t.TempDir(), set)
		if err := s.Stage(context.Background(), Channel{Name: set, URI: "s3://" + b + "/" + set + "/"}, 0, 1, dst, nil); err != nil {
			t.Fatal(err)
		}
		return len(proxy.take())
	}
	for _, set := range []string{"a", "b", "a", "c"} {
		stage(set)
		time.Sleep(10 * time.Millisecond) // distinct use times
	}
	var cached int64
	entries, _ := os.ReadDir(filepath.Join(cacheDir, "objects"))
	for _, e := range entries {
		info, _ := e.Info()
		cached += info.Size()
		if info.Mode().Perm() != 0o444 {
			t.Errorf("cached file %s has mode %v, want read-only", e.Name(), info.Mode())
		}
	}
	if cached > 4*size {
		t.Errorf("cache holds %d bytes, bound %d", cached, 4*size)
	}
	if n := stage("a"); n != 0 {
		t.Errorf("a, recently used, fetched %d objects; want it cached", n)
	}
	if n := stage("c"); n != 0 {
		t.Errorf("c, just staged, fetched %d objects; want it cached", n)
	}
	if n := stage("b"); n != 2 {
		t.Errorf("b, least recently used, fetched %d objects; want 2 (evicted)", n)
	}
}

// TestStageConcurrentSameObjects stages one prefix four times at once into one
// cache: every copy is whole, and the cache serves them afterwards.
func TestStageConcurrentSameObjects(t *testing.T) {
	endpoint, c := server(t)
	b := newBucket(t, c)
	want := map[string]string{}
	for i := range 8 {
		key := fmt.Sprintf("f%d", i)
		want[key] = string(randomBytes(t, 100_000))
		s3test.Put(t, c, b, "d/"+key, []byte(want[key]))
	}
	s := newStore(t, endpoint, func(c *Config) { c.CacheDir = t.TempDir() })
	errs := make(chan error, 4)
	dsts := make([]string, 4)
	for i := range dsts {
		dsts[i] = filepath.Join(t.TempDir(), "train")
		go func() {
			errs <- s.Stage(context.Background(), Channel{Name: "train", URI: "s3://" + b + "/d/"}, 0, 1, dsts[i], nil)
		}()
	}
	for range dsts {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	for _, dst := range dsts {
		if !cmp.Equal(want, tree(t, dst)) {
			t.Errorf("%s differs from the objects", dst)
		}
	}
}

func TestStageRefusesNonEmptyDestination(t *testing.T) {
	endpoint, c := server(t)
	b := newBucket(t, c)
	s3test.Put(t, c, b, "p/a", []byte("a"))
	dst := t.TempDir()
	if err := os.WriteFile(filepath.Join(dst, "earlier"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	err := newStore(t, endpoint, nil).Stage(context.Background(), Channel{Name: "train", URI: "s3://" + b + "/p/"}, 0, 1, dst, nil)
	if err == nil || !strings.Contains(err.Error(), "is not empty") {
		t.Errorf("got %v, want a refusal", err)
	}
}

// Ensure Link hard-links staged objects to the cache, on the download that
// fills it and on a hit, and a Stage without it copies.
func TestStageLink(t *testing.T) {
	endpoint, c := server(t)
	bucket := newBucket(t, c)
	s3test.Put(t, c, bucket, "p/a", []byte("alpha"))
	s := newStore(t, endpoint, func(cfg *Config) { cfg.CacheDir = t.TempDir() })
	links := func(ch Channel) uint64 {
		dst := filepath.Join(t.TempDir(), "train")
		if err := s.Stage(t.Context(), ch, 0, 1, dst, nil); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(filepath.Join(dst, "a"))
		if err != nil {
			t.Fatal(err)
		}
		return uint64(fi.Sys().(*syscall.Stat_t).Nlink)
	}
	ch := Channel{Name: "train", URI: "s3://" + bucket + "/p/", Link: true}
	if n := links(ch); n != 2 {
		t.Errorf("first Stage: %d links, want 2 (the cache's and the channel's)", n)
	}
	if n := links(ch); n != 3 {
		t.Errorf("second Stage: %d links, want 3", n)
	}
	ch.Link = false
	if n := links(ch); n != 1 {
		t.Errorf("a Stage without Link: %d links, want a copy", n)
	}
}
