package s3server_test

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	tm "github.com/aws/aws-sdk-go-v2/feature/s3/transfermanager"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"golang.org/x/sync/errgroup"

	"github.com/sharq-dev/sharq/internal/s3data/s3test"
	"github.com/sharq-dev/sharq/internal/testwait"
)

var (
	bench    = flag.Bool("s3server-bench", false, "move 1 GiB (one object; 1,000 objects) through the built-in S3, moto_server and a plain file copy, and print the speeds")
	benchMiB = flag.Int("s3server-bench-mib", 1024, "with -s3server-bench: the MiB moved each way")
)

// TestTransferBenchmark uploads and downloads 1 GiB as one object and as
// 1,000 objects with the AWS SDK for Go's transfer manager, through the
// built-in S3 (behind SigV4, on loopback) and moto_server, and copies the
// same files on the file system, all in one run; it prints the speeds and
// the heap's peak, and asserts none of them (they depend on the machine):
//
//	go test ./internal/s3server -run TestTransferBenchmark -s3server-bench -v -timeout 1h
func TestTransferBenchmark(t *testing.T) {
	if !*bench {
		t.Skip("run with -s3server-bench")
	}
	src := t.TempDir()
	gib := int64(*benchMiB) << 20
	mib := float64(*benchMiB)
	writeRandom(t, filepath.Join(src, "one", "big.bin"), gib, 1000)
	for i := range 1000 {
		writeRandom(t, filepath.Join(src, "many", fmt.Sprintf("f%04d", i)), gib/1000, uint64(i))
	}
	fmt.Printf("load before: %s", loadavg())
	for _, set := range []string{"one", "many"} {
		copyTime := timeIt(func() error { return copyTree(filepath.Join(src, set), filepath.Join(t.TempDir(), set)) })
		fmt.Printf("%-4s file copy            %6.1fs %6.0f MiB/s\n", set, copyTime.Seconds(), mib/copyTime.Seconds())
		sharqURL, peakRSS := startSharq(t)
		motoURL, _ := s3test.Start(t)
		for _, target := range []struct{ name, url string }{{"built-in", sharqURL}, {"moto", motoURL}} {
			c := s3.New(s3.Options{Region: s3test.Region, BaseEndpoint: aws.String(target.url), UsePathStyle: true, Credentials: s3test.Credentials()})
			bucket := "bench-" + set
			_, err := c.CreateBucket(t.Context(), &s3.CreateBucketInput{Bucket: aws.String(bucket)})
			fatalIf(t, "create bucket", err)
			up := timeIt(func() error { return uploadTree(t.Context(), c, bucket, filepath.Join(src, set)) })
			down := timeIt(func() error { return downloadTree(t.Context(), c, bucket, filepath.Join(t.TempDir(), set)) })
			rss := ""
			if target.name == "built-in" {
				rss = fmt.Sprintf("  sharq serve peak RSS %d MiB", peakRSS()>>20)
			}
			fmt.Printf("%-4s %-8s upload %6.1fs %6.0f MiB/s (%3.0f%% of copy)  download %6.1fs %6.0f MiB/s (%3.0f%% of copy)%s\n",
				set, target.name, up.Seconds(), mib/up.Seconds(), 100*copyTime.Seconds()/up.Seconds(),
				down.Seconds(), mib/down.Seconds(), 100*copyTime.Seconds()/down.Seconds(), rss)
		}
	}
	fmt.Printf("load after: %s", loadavg())
}

func timeIt(f func() error) time.Duration {
	start := time.Now()
	if err := f(); err != nil {
		panic(err)
	}
	return time.Since(start)
}

func writeRandom(t *testing.T, path string, size int64, seed uint64) {
	t.Helper()
	fatalIf(t, "mkdir", os.MkdirAll(filepath.Dir(path), 0o755))
	f, err := os.Create(path)
	fatalIf(t, "create", err)
	_, err = io.Copy(f, io.LimitReader(rand.NewChaCha8([32]byte{byte(seed), byte(seed >> 8)}), size))
	fatalIf(t, "write", err)
	fatalIf(t, "close", f.Close())
}

// files are the regular files under dir, by their path relative to it.
func files(dir string) []string {
	var out []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, rel)
		}
		return nil
	})
	return out
}

func copyTree(src, dst string) error {
	g := new(errgroup.Group)
	g.SetLimit(16)
	for _, rel := range files(src) {
		g.Go(func() error {
			in, err := os.Open(filepath.Join(src, rel))
			if err != nil {
				return err
			}
			defer in.Close()
			os.MkdirAll(filepath.Dir(filepath.Join(dst, rel)), 0o755)
			out, err := os.Create(filepath.Join(dst, rel))
			if err != nil {
				return err
			}
			if _, err := io.Copy(out, in); err != nil {
				out.Close()
				return err
			}
			return out.Close()
		})
	}
	return g.Wait()
}

func uploadTree(ctx context.Context, c *s3.Client, bucket, src string) error {
	up := tm.New(c, func(o *tm.Options) { o.PartSizeBytes = 16 << 20; o.Concurrency = 8 })
	g := new(errgroup.Group)
	g.SetLimit(16)
	for _, rel := range files(src) {
		g.Go(func() error {
			f, err := os.Open(filepath.Join(src, rel))
			if err != nil {
				return err
			}
			defer f.Close()
			_, err = up.UploadObject(ctx, &tm.UploadObjectInput{Bucket: aws.String(bucket), Key: aws.String(rel), Body: f})
			return err
		})
	}
	return g.Wait()
}

func downloadTree(ctx context.Context, c *s3.Client, bucket, dst string) error {
	down := tm.New(c, func(o *tm.Options) { o.PartSizeBytes = 16 << 20; o.Concurrency = 8 })
	_, err := down.DownloadDirectory(ctx, &tm.DownloadDirectoryInput{Bucket: aws.String(bucket), Destination: aws.String(dst)})
	return err
}

func loadavg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	return string(b)
}

// startSharq builds and starts sharq serve (--auth none, the simulated
// executor), whose built-in S3 the benchmark uses, and returns its URL
// and a reader of its peak resident memory (VmHWM).
func startSharq(t *testing.T) (string, func() int64) {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "sharq")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/sharq-dev/sharq/cmd/sharq").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	fatalIf(t, "free port", err)
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(bin, "serve", "--listen", addr, "--data-dir", filepath.Join(dir, "data"), "--auth", "none", "--executor", "simulated")
	cmd.Stderr = os.Stderr
	fatalIf(t, "start sharq serve", cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	url := "http://" + addr
	testwait.Until(t, 30*time.Second, func() error {
		resp, err := http.Get(url + "/healthz")
		if err != nil {
			return fmt.Errorf("sharq serve did not answer /healthz: %v", err)
		}
		resp.Body.Close()
		return nil
	})
	return url, func() int64 {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", cmd.Process.Pid))
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
				kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
				return kb << 10
			}
		}
		return 0
	}
}
