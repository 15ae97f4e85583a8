package s3data

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	tm "github.com/aws/aws-sdk-go-v2/feature/s3/transfermanager"
	"golang.org/x/sync/errgroup"

	"github.com/sharq-dev/sharq/internal/s3data/s3test"
)

var benchAgainstCLI = flag.Bool("s3data-bench", false, "stage 1 GiB from moto_server and compare with aws s3 cp --recursive")

// TestStageBenchmarkAgainstAWSCLI stages 1 GiB as 1,000 files and as one file,
// and copies the same prefixes with the AWS CLI from the same server. It only
// reports the times; speed depends on the machine and is not asserted.
//
//	go test ./internal/s3data -run BenchmarkAgainst -s3data-bench -v
func TestStageBenchmarkAgainstAWSCLI(t *testing.T) {
	if !*benchAgainstCLI {
		t.Skip("run with -s3data-bench")
	}
	if _, err := exec.LookPath("aws"); err != nil {
		t.Fatal("the AWS CLI is not installed")
	}
	endpoint, c := server(t)
	b := newBucket(t, c)
	// moto reads the whole object for each ranged GET, one request at a
	// time: the last of a 1 GiB object's ranges waits long for its headers.
	s := newStore(t, endpoint, func(c *Config) { c.ReadTimeout = time.Minute })
	up := tm.New(c)
	ctx := context.Background()
	const gib = 1 << 30

	put := func(key string, size int64, seed uint64) error {
		body := io.LimitReader(rand.NewChaCha8([32]byte{byte(seed), byte(seed >> 8)}), size)
		_, err := up.UploadObject(ctx, &tm.UploadObjectInput{Bucket: aws.String(b), Key: aws.String(key), Body: body})
		return err
	}
	g, _ := errgroup.WithContext(ctx)
	g.SetLimit(16)
	for i := range 1000 {
		g.Go(func() error { return put(fmt.Sprintf("many/f%04d", i), gib/1000, uint64(i)) })
	}
	g.Go(func() error { return put("one/big.bin", gib, 1000) })
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}

	fmt.Printf("load before: %s", loadavg())
	for _, prefix := range []string{"many/", "one/"} {
		dst := filepath.Join(t.TempDir(), "stage")
		start := time.Now()
		if err := s.Stage(ctx, Channel{Name: "bench", URI: "s3://" + b + "/" + prefix}, 0, 1, dst, nil); err != nil {
			t.Fatal(err)
		}
		ours := time.Since(start)
		os.RemoveAll(dst)

		dst = filepath.Join(t.TempDir(), "cli")
		cmd := exec.Command("aws", "s3", "cp", "--recursive", "--quiet", "--endpoint-url", endpoint, "s3://"+b+"/"+prefix, dst)
		cmd.Env = append(os.Environ(), "AWS_ACCESS_KEY_ID=testing", "AWS_SECRET_ACCESS_KEY=testing",
			"AWS_DEFAULT_REGION="+s3test.Region, "AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null")
		start = time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("aws s3 cp: %v: %s", err, out)
		}
		cli := time.Since(start)
		os.RemoveAll(dst)
		fmt.Printf("%-6s Stage %6.1fs (%5.0f MiB/s)  aws s3 cp %6.1fs (%5.0f MiB/s)  cli/stage %.2f\n",
			strings.TrimSuffix(prefix, "/"), ours.Seconds(), 1024/ours.Seconds(), cli.Seconds(), 1024/cli.Seconds(), cli.Seconds()/ours.Seconds())
	}
	fmt.Printf("load after: %s", loadavg())
}

func loadavg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	return string(b)
}
