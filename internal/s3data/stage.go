package s3data

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	tm "github.com/aws/aws-sdk-go-v2/feature/s3/transfermanager"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"golang.org/x/sync/errgroup"
)

// Channel is one InputDataConfig entry to stage.
type Channel struct {
	Name string
	// URI is s3://bucket/prefix, file:///dir or an absolute path; for a
	// ManifestFile, the manifest itself.
	URI string
	// DataType is "S3Prefix" (the default) or "ManifestFile".
	DataType string
	// Distribution is "FullyReplicated" (the default) or "ShardedByS3Key".
	Distribution string
	// Link hard-links objects kept in the cache into the destination
	// instead of copying them, which takes no time and no space. Only for
	// a caller that shows the destination to the job read-only or under an
	// overlay: a write through a link would change the cache.
	Link bool
}

// Data types and distributions as SageMaker names them.
const (
	S3Prefix        = "S3Prefix"
	ManifestFile    = "ManifestFile"
	FullyReplicated = "FullyReplicated"
	ShardedByS3Key  = "ShardedByS3Key"
)

// Progress counts the bytes of a Stage.
type Progress struct{ Done, Total int64 }

// String is "1.5 GiB of 4.0 GiB", as the STARTING reasons say it.
func (p Progress) String() string { return bytesText(p.Done) + " of " + bytesText(p.Total) }

// bytesText is n in the binary unit that suits it: "512 B", "1.5 GiB".
func bytesText(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// progressEvery is how often Stage reports progress while it copies; a
// variable so tests can watch a transfer closely.
var progressEvery = 500 * time.Millisecond

// object is one file to stage: its place below the destination and its source.
type object struct {
	rel    string // relative local path
	bucket string // "" for a local source
	key    string // S3 key, or slash-separated local path used for ordering
	path   string // local source
	size   int64
	etag   string
	link   bool // Channel.Link
}

// Stage copies the channel's objects for host index host (0-based) of hosts
// into dst, which must not exist or be an empty directory.
//
// Files keep their key's path below the prefix (a prefix that is itself an
// object's key gives that object under its base name, as SageMaker's local
// mode does). ShardedByS3Key gives host i the objects whose index in key order
// is i mod hosts, so each host gets a disjoint part (none when there are
// fewer objects than hosts); a ManifestFile is sharded in the manifest's
// order. A manifest is AWS's format:
// [{"prefix":"s3://b/p/"}, "rel1", "rel2"].
//
// Stage copies into a temporary directory beside dst and renames it into
// place on success, so a failed or canceled Stage leaves nothing behind.
// progress, if not nil, is called now and then from one goroutine, never
// after Stage returns.
func (s *Store) Stage(ctx context.Context, ch Channel, host, hosts int, dst string, progress func(Progress)) error {
	if err := s.stage(ctx, ch, host, hosts, dst, progress); err != nil {
		return fmt.Errorf("channel %s: %s: %w", ch.Name, ch.URI, err)
	}
	return nil
}

func (s *Store) stage(ctx context.Context, ch Channel, host, hosts int, dst string, progress func(Progress)) error {
	dataType := cmp.Or(ch.DataType, S3Prefix)
	dist := cmp.Or(ch.Distribution, FullyReplicated)
	if dataType != S3Prefix && dataType != ManifestFile {
		return fmt.Errorf("data type %q is not supported (want %s or %s)", ch.DataType, S3Prefix, ManifestFile)
	}
	if dist != FullyReplicated && dist != ShardedByS3Key {
		return fmt.Errorf("distribution %q is not supported (want %s or %s)", ch.Distribution, FullyReplicated, ShardedByS3Key)
	}
	if hosts < 1 || host < 0 || host >= hosts {
		return fmt.Errorf("host index %d is not within %d hosts", host, hosts)
	}
	if err := checkEmptyDest(dst); err != nil {
		return err
	}
	loc, err := parseURI(ch.URI)
	if err != nil {
		return err
	}
	var objs []object
	if dataType == ManifestFile {
		objs, err = s.resolveManifest(ctx, loc)
	} else {
		objs, err = s.resolvePrefix(ctx, loc)
	}
	if err != nil {
		return err
	}
	if dist == ShardedByS3Key {
		objs = shard(objs, host, hosts)
	}
	for i := range objs {
		objs[i].link = ch.Link
	}

	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".staging-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp) // nothing is left once renamed into place
	if err := s.fetchAll(ctx, objs, tmp, progress); err != nil {
		return err
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	if err := os.Remove(dst); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("destination: %w", err)
	}
	return os.Rename(tmp, dst)
}

// checkEmptyDest refuses to stage over existing data: a staging directory that
// holds files is a job's earlier state, not ours to throw away.
func checkEmptyDest(dst string) error {
	if !filepath.IsAbs(dst) {
		return fmt.Errorf("destination %s is not an absolute path", dst)
	}
	entries, err := os.ReadDir(dst)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("destination: %w", err)
	case len(entries) > 0:
		return fmt.Errorf("destination %s is not empty", dst)
	}
	return nil
}

// shard keeps the objects at indexes host, host+hosts, host+2*hosts, ...
func shard(objs []object, host, hosts int) []object {
	var mine []object
	for i := host; i < len(objs); i += hosts {
		mine = append(mine, objs[i])
	}
	return mine
}

// resolvePrefix lists the objects under a prefix, in key order.
func (s *Store) resolvePrefix(ctx context.Context, loc location) ([]object, error) {
	var objs []object
	var err error
	if loc.local() {
		objs, err = listLocal(loc.path)
	} else {
		objs, err = s.listS3(ctx, loc)
	}
	if err != nil {
		return nil, err
	}
	if len(objs) == 0 {
		return nil, ErrNoObjects
	}
	slices.SortFunc(objs, func(a, b object) int { return cmp.Compare(a.key, b.key) })
	return objs, checkDistinct(objs)
}

func (s *Store) listS3(ctx context.Context, loc location) ([]object, error) {
	var objs []object
	pages := s3.NewListObjectsV2Paginator(s.s3, &s3.ListObjectsV2Input{Bucket: &loc.bucket, Prefix: &loc.key})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, s.explain(err, loc.bucket)
		}
		for _, o := range page.Contents {
			key := aws.ToString(o.Key)
			if key == "" || key[len(key)-1] == '/' {
				continue // a folder marker, not data
			}
			rel := key[len(loc.key):]
			if key == loc.key {
				rel = path.Base(key)
			}
			p, err := relPath(rel)
			if err != nil {
				return nil, err
			}
			objs = append(objs, object{rel: p, bucket: loc.bucket, key: key, size: aws.ToInt64(o.Size), etag: aws.ToString(o.ETag)})
		}
	}
	return objs, nil
}

// listLocal lists the regular files below dir (or dir itself if it is a file).
func listLocal(dir string) ([]object, error) {
	info, err := os.Stat(dir)
	if err != nil {
		return nil, localCause(err)
	}
	if !info.IsDir() {
		return []object{{rel: filepath.Base(dir), key: filepath.Base(dir), path: dir, size: info.Size()}}, nil
	}
	var objs []object
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := os.Stat(p) // follows links to files
		if err != nil || !info.Mode().IsRegular() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		objs = append(objs, object{rel: rel, key: filepath.ToSlash(rel), path: p, size: info.Size()})
		return nil
	})
	if err != nil {
		return nil, localCause(err)
	}
	return objs, nil
}

func localCause(err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return &plainError{msg: "no such file or directory", err: err}
	}
	if errors.Is(err, fs.ErrPermission) {
		return &plainError{msg: "access denied", err: err}
	}
	return err
}

// checkDistinct refuses two objects that land on one file, and an object
// whose file would be a directory of another's (keys a and a/b).
func checkDistinct(objs []object) error {
	seen := make(map[string]string, len(objs))
	for _, o := range objs {
		if other, ok := seen[o.rel]; ok {
			return fmt.Errorf("objects %s and %s both map to the file %s", other, o.key, o.rel)
		}
		seen[o.rel] = o.key
	}
	for _, o := range objs {
		for dir := filepath.Dir(o.rel); dir != "."; dir = filepath.Dir(dir) {
			if other, ok := seen[dir]; ok {
				return fmt.Errorf("object %s needs %s as a directory, but object %s is that file", o.key, dir, other)
			}
		}
	}
	return nil
}

// fetchAll copies objs below dir, Concurrency objects at a time.
func (s *Store) fetchAll(ctx context.Context, objs []object, dir string, progress func(Progress)) error {
	var total int64
	for _, o := range objs {
		total += o.size
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(o.rel)), 0o755); err != nil {
			return fmt.Errorf("object %s: %w", o.key, err)
		}
	}
	var done atomic.Int64
	stopProgress := reportProgress(progress, &done, total)
	defer stopProgress()

	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(s.cfg.Concurrency)
	for _, o := range objs {
		if gctx.Err() != nil {
			break
		}
		g.Go(func() error {
			err := s.fetch(gctx, o, filepath.Join(dir, o.rel), &done)
			if err != nil {
				return fmt.Errorf("object %s: %w", o.key, s.explain(err, o.bucket))
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return s.explain(err, "")
	}
	stopProgress()
	if progress != nil {
		progress(Progress{Done: total, Total: total})
	}
	return nil
}

// reportProgress calls progress every progressEvery until the returned stop
// is called; stop waits for a call in flight, and may be called twice.
func reportProgress(progress func(Progress), done *atomic.Int64, total int64) (stop func()) {
	if progress == nil {
		return func() {}
	}
	quit, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(progressEvery)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
				// A range fetched again counts twice; never report more than all.
				progress(Progress{Done: min(done.Load(), total), Total: total})
			}
		}
	}()
	stopped := false
	return func() {
		if !stopped {
			stopped = true
			close(quit)
			<-finished
		}
	}
}

// fetch copies one object to dst: from a local file, from the cache, or from S3
// (through the cache when there is one).
func (s *Store) fetch(ctx context.Context, o object, dst string, done *atomic.Int64) error {
	if o.bucket == "" {
		if err := copyFile(o.path, dst, 0o644); err != nil {
			return localCause(err)
		}
		done.Add(o.size)
		return nil
	}
	if o.size == 0 {
		return writeEmpty(dst)
	}
	if s.cache == nil || o.etag == "" || !s.cache.fits(o.size) {
		return s.download(ctx, o, dst, done)
	}
	if f := s.cache.open(o.bucket, o.key, o.etag, o.size); f != nil {
		defer f.Close()
		if o.link && os.Link(f.Name(), dst) == nil {
			done.Add(o.size)
			return nil
		}
		if err := copyFrom(f, dst, 0o644); err != nil {
			return err
		}
		done.Add(o.size)
		return nil
	}
	tmp, err := s.cache.tempFile()
	if err != nil {
		return err
	}
	tmp.Close()
	defer os.Remove(tmp.Name()) // gone once committed
	if err := s.download(ctx, o, tmp.Name(), done); err != nil {
		return err
	}
	// The link, made before the commit, holds the content even if the
	// commit's eviction takes the cached file.
	if !o.link || os.Link(tmp.Name(), dst) != nil {
		if err := copyFile(tmp.Name(), dst, 0o644); err != nil {
			return err
		}
	}
	return s.cache.commit(tmp.Name(), o.bucket, o.key, o.etag, o.size)
}

// download fetches an object into the file dst with the transfer manager's
// concurrent ranged GETs. If-Match on the listed ETag makes an object replaced
// meanwhile an error rather than a file that the cache would file under the
// old ETag.
func (s *Store) download(ctx context.Context, o object, dst string, done *atomic.Int64) error {
	f, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	in := &tm.DownloadObjectInput{
		Bucket:   aws.String(o.bucket),
		Key:      aws.String(o.key),
		WriterAt: countingWriterAt{f, done},
	}
	if o.etag != "" {
		in.IfMatch = aws.String(o.etag)
	}
	out, err := s.tm.DownloadObject(ctx, in, func(opt *tm.Options) { opt.PartSizeBytes = rangeSize(o.size) })
	if err != nil {
		return err
	}
	if n := aws.ToInt64(out.ContentLength); n != o.size {
		return fmt.Errorf("got %d bytes, the listing said %d: the object changed while it was being copied", n, o.size)
	}
	return f.Close()
}

// rangeSize splits an object into about partConcurrency ranged GETs, each
// between minPartSize (AWS's advice) and maxPartSize: few enough requests
// that a server which reads the whole object per range (moto) copes, enough
// that a failed range costs little to fetch again.
func rangeSize(size int64) int64 {
	return min(max(size/partConcurrency, minPartSize), maxPartSize)
}

type countingWriterAt struct {
	w    io.WriterAt
	done *atomic.Int64
}

func (c countingWriterAt) WriteAt(p []byte, off int64) (int, error) {
	n, err := c.w.WriteAt(p, off)
	c.done.Add(int64(n))
	return n, err
}
