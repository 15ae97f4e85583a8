package s3data

import (
	"context"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// peakHeap samples the heap in use while f runs and returns its peak.
func peakHeap(f func()) uint64 {
	runtime.GC()
	var peak atomic.Uint64
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			if m.HeapInuse > peak.Load() {
				peak.Store(m.HeapInuse)
			}
			select {
			case <-quit:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	f()
	close(quit)
	<-done
	return peak.Load()
}

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

	var upErr error
	peak := peakHeap(func() { upErr = s.UploadArchive(ctx, "s3://"+b+"/p", []string{dir}, false) })
	if upErr != nil {
		t.Fatal(upErr)
	}
	if peak > bound {
		t.Errorf("uploading %d MiB: heap peaked at %d MiB, bound %d MiB", size>>20, peak>>20, bound>>20)
	}
	t.Logf("upload of %d MiB: heap peaked at %d MiB", size>>20, peak>>20)

	var stageErr error
	dst := filepath.Join(t.TempDir(), "train")
	peak = peakHeap(func() {
		stageErr = s.Stage(ctx, Channel{Name: "train", URI: "s3://" + b + "/p/"}, 0, 1, dst, nil)
	})
	if stageErr != nil {
		t.Fatal(stageErr)
	}
	if peak > bound {
		t.Errorf("staging %d MiB: heap peaked at %d MiB, bound %d MiB", size>>20, peak>>20, bound>>20)
	}
	if info, err := os.Stat(filepath.Join(dst, "large.bin")); err != nil || info.Size() != size {
		t.Fatalf("staged file: %v %v", info, err)
	}
	t.Logf("stage of %d MiB: heap peaked at %d MiB", size>>20, peak>>20)

	peak = peakHeap(func() { upErr = s.UploadArchive(ctx, "s3://"+b+"/out/model.tar.gz", []string{dir}, true) })
	if upErr != nil {
		t.Fatal(upErr)
	}
	if peak > bound {
		t.Errorf("archiving %d MiB: heap peaked at %d MiB, bound %d MiB", size>>20, peak>>20, bound>>20)
	}
	t.Logf("tar.gz upload of %d MiB: heap peaked at %d MiB", size>>20, peak>>20)
}
