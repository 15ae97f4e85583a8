package s3data

import (
	"context"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/sharq-dev/sharq/internal/heappeak"
)

// TestMemoryStaysFlatInObjectSize stages and archives an object several
// times larger than the heap may grow: both stream through disk and bounded
// buffers, never holding the object.
func TestMemoryStaysFlatInObjectSize(t *testing.T) {
	endpoint, c := server(t)
	b := newBucket(t, c)
	const size = 256 << 20
	const bound = 128 << 20 // 8 ranged GETs or upload parts of 8 MiB, and slack
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, "large.bin"))
	if err != nil {
		t.Fatal(err)
	}
	// Random bytes: gzip cannot shrink them, so the archive is as large.
	if _, err := io.CopyN(f, rand.NewChaCha8([32]byte{1}), size); err != nil {
		t.Fatal(err)
	}
	f.Close()
	s := newStore(t, endpoint, nil)
	ctx := context.Background()

	stop := heappeak.Start()
	err = s.UploadArchive(ctx, "s3://"+b+"/p", []string{dir}, false)
	peak := stop()
	if err != nil {
		t.Fatal(err)
	}
	if peak > bound {
		t.Errorf("uploading %d MiB: heap peaked at %d MiB, bound %d MiB", size>>20, peak>>20, bound>>20)
	}
	t.Logf("upload of %d MiB: heap peaked at %d MiB", size>>20, peak>>20)

	dst := filepath.Join(t.TempDir(), "train")
	stop = heappeak.Start()
	err = s.Stage(ctx, Channel{Name: "train", URI: "s3://" + b + "/p/"}, 0, 1, dst, nil)
	peak = stop()
	if err != nil {
		t.Fatal(err)
	}
	if peak > bound {
		t.Errorf("staging %d MiB: heap peaked at %d MiB, bound %d MiB", size>>20, peak>>20, bound>>20)
	}
	if info, err := os.Stat(filepath.Join(dst, "large.bin")); err != nil || info.Size() != size {
		t.Fatalf("staged file: %v %v", info, err)
	}
	t.Logf("stage of %d MiB: heap peaked at %d MiB", size>>20, peak>>20)

	stop = heappeak.Start()
	err = s.UploadArchive(ctx, "s3://"+b+"/out/model.tar.gz", []string{dir}, true)
	peak = stop()
	if err != nil {
		t.Fatal(err)
	}
	if peak > bound {
		t.Errorf("archiving %d MiB: heap peaked at %d MiB, bound %d MiB", size>>20, peak>>20, bound>>20)
	}
	t.Logf("tar.gz upload of %d MiB: heap peaked at %d MiB", size>>20, peak>>20)
}
