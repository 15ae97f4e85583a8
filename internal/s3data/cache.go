package s3data

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"
)

// cache keeps fetched S3 objects on local disk, named by a hash of bucket, key
// and ETag, so an unchanged object is never fetched twice and a changed one
// never served stale. Files are written to tmp/ and renamed into objects/, so
// concurrent fetches of one object (in this or another process) never leave a
// torn file. The last use of an object is its file's modification time,
// touched on every hit; beyond the bound the least recently used go first.
//
// Cached files are read-only (0444), and Stage copies them into a channel
// rather than hard-linking them: a hard link shares its content, and a job
// that runs as root (the usual case in a container) writes through 0444, so a
// job writing into its channel would corrupt the cache for the next job. Go's
// file copy uses copy_file_range, which clones the extents on file systems
// that can (XFS, Btrfs) and copies in the kernel elsewhere.
type cache struct {
	dir   string
	bound int64

	mu   sync.Mutex
	size int64 // bytes in objects/, as last counted plus what was added since
}

func openCache(dir string, bound int64) (*cache, error) {
	c := &cache{dir: dir, bound: bound}
	for _, d := range []string{c.objectsDir(), c.tmpDir()} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, fmt.Errorf("s3data: cache directory: %w", err)
		}
	}
	c.removeStaleTemps()
	_, total, err := c.scan()
	if err != nil {
		return nil, fmt.Errorf("s3data: cache directory: %w", err)
	}
	c.size = total
	return c, nil
}

func (c *cache) objectsDir() string { return filepath.Join(c.dir, "objects") }
func (c *cache) tmpDir() string     { return filepath.Join(c.dir, "tmp") }

func (c *cache) path(bucket, key, etag string) string {
	h := sha256.Sum256([]byte(bucket + "\x00" + key + "\x00" + etag))
	return filepath.Join(c.objectsDir(), hex.EncodeToString(h[:]))
}

// fits says whether an object of this size may be cached at all; one bigger
// than the whole bound would only evict everything else.
func (c *cache) fits(size int64) bool { return c.bound <= 0 || size <= c.bound }

// open returns the cached copy of an object, or nil if there is none, and marks
// it as just used.
func (c *cache) open(bucket, key, etag string, size int64) *os.File {
	p := c.path(bucket, key, etag)
	f, err := os.Open(p)
	if err != nil {
		return nil
	}
	if st, err := f.Stat(); err != nil || st.Size() != size {
		f.Close()
		return nil
	}
	now := time.Now()
	_ = os.Chtimes(p, now, now) // a failed touch only makes eviction less exact
	return f
}

// tempFile is where a download goes before it is committed.
func (c *cache) tempFile() (*os.File, error) {
	return os.CreateTemp(c.tmpDir(), "fetch-*")
}

// commit moves a finished download into the cache and evicts beyond the bound.
func (c *cache) commit(tmp, bucket, key, etag string, size int64) error {
	if err := os.Chmod(tmp, 0o444); err != nil {
		return err
	}
	if err := os.Rename(tmp, c.path(bucket, key, etag)); err != nil {
		return err
	}
	c.mu.Lock()
	c.size += size
	over := c.bound > 0 && c.size > c.bound
	c.mu.Unlock()
	if over {
		return c.evict()
	}
	return nil
}

type cachedFile struct {
	path string
	size int64
	used time.Time
}

func (c *cache) scan() ([]cachedFile, int64, error) {
	entries, err := os.ReadDir(c.objectsDir())
	if err != nil {
		return nil, 0, err
	}
	var files []cachedFile
	var total int64
	for _, e := range entries {
		info, err := e.Info()
		if err != nil {
			continue // evicted by another process meanwhile
		}
		files = append(files, cachedFile{filepath.Join(c.objectsDir(), e.Name()), info.Size(), info.ModTime()})
		total += info.Size()
	}
	return files, total, nil
}

// evict removes the least recently used objects until the cache is within its
// bound. A file evicted while a Stage copies it stays readable to that copy.
func (c *cache) evict() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	files, total, err := c.scan()
	if err != nil {
		return err
	}
	// Oldest use first, then path, so the order is total.
	slices.SortFunc(files, func(a, b cachedFile) int {
		return cmp.Or(a.used.Compare(b.used), cmp.Compare(a.path, b.path))
	})
	for _, f := range files {
		if total <= c.bound {
			break
		}
		if err := os.Remove(f.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		total -= f.size
	}
	c.size = total
	return nil
}

// removeStaleTemps deletes downloads that a crashed process left behind; a
// day is far longer than any live download takes between writes.
func (c *cache) removeStaleTemps() {
	entries, _ := os.ReadDir(c.tmpDir())
	for _, e := range entries {
		if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > 24*time.Hour {
			os.Remove(filepath.Join(c.tmpDir(), e.Name()))
		}
	}
}
