package s3data

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	tm "github.com/aws/aws-sdk-go-v2/feature/s3/transfermanager"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"golang.org/x/sync/errgroup"
)

// UploadArchive puts the merged content of dirs (later dirs win on name
// clashes; a missing dir adds nothing) at uri, an s3:// or file:// URI or an
// absolute path.
//
// With gzip, uri names the archive itself (.../output/model.tar.gz), a tar
// stream gzipped on the fly into a multipart upload, so neither memory nor
// disk holds the whole archive. Without gzip (SageMaker's CompressionType
// NONE), uri is a prefix or directory that receives the files as they are.
func (s *Store) UploadArchive(ctx context.Context, uri string, dirs []string, gzip bool) error {
	if err := s.uploadArchive(ctx, uri, dirs, gzip); err != nil {
		return fmt.Errorf("upload %s: %w", uri, err)
	}
	return nil
}

func (s *Store) uploadArchive(ctx context.Context, uri string, dirs []string, gz bool) error {
	loc, err := parseURI(uri)
	if err != nil {
		return err
	}
	entries, err := mergeDirs(dirs)
	if err != nil {
		return err
	}
	switch {
	case gz && loc.local():
		return writeLocalArchive(loc.path, entries)
	case gz:
		return s.uploadTarGz(ctx, loc, entries)
	case loc.local():
		if err := os.MkdirAll(loc.path, 0o755); err != nil {
			return localCause(err)
		}
		for _, e := range entries {
			target := filepath.Join(loc.path, filepath.FromSlash(e.rel))
			if e.info.IsDir() {
				err = os.MkdirAll(target, 0o755)
			} else {
				err = copyFile(e.path, target, 0o644)
			}
			if err != nil {
				return localCause(err)
			}
		}
		return nil
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(s.cfg.Concurrency)
	for _, e := range entries {
		if e.info.IsDir() {
			continue
		}
		g.Go(func() error {
			return s.uploadFile(gctx, loc.bucket, dirPrefix(loc.key)+e.rel, e.path)
		})
	}
	return s.explain(g.Wait(), loc.bucket)
}

// entry is one file or directory of a merged tree.
type entry struct {
	rel  string // slash-separated
	path string
	info fs.FileInfo
}

// mergeDirs lists the files and directories of dirs as one tree, in name
// order. A later dir's entry replaces an earlier one of the same name, and an
// earlier dir's entries below a name that a later dir holds as a file are
// dropped, so the tree stays a tree.
func mergeDirs(dirs []string) ([]entry, error) {
	merged := map[string]entry{}
	for _, dir := range dirs {
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if p == dir && errors.Is(err, fs.ErrNotExist) {
					return fs.SkipAll
				}
				return err
			}
			if p == dir {
				return nil
			}
			info, err := os.Stat(p) // follows links; a dangling one is skipped
			if err != nil || !(info.IsDir() || info.Mode().IsRegular()) {
				return nil
			}
			if d.Type()&fs.ModeSymlink != 0 && info.IsDir() {
				return nil // a link to a directory could loop; its files are elsewhere
			}
			rel, _ := filepath.Rel(dir, p)
			merged[filepath.ToSlash(rel)] = entry{rel: filepath.ToSlash(rel), path: p, info: info}
			return nil
		})
		if err != nil {
			return nil, localCause(err)
		}
	}
	var entries []entry
	for rel, e := range merged {
		if !belowFile(merged, rel) {
			entries = append(entries, e)
		}
	}
	slices.SortFunc(entries, func(a, b entry) int { return strings.Compare(a.rel, b.rel) })
	return entries, nil
}

func belowFile(merged map[string]entry, rel string) bool {
	for dir := path.Dir(rel); dir != "."; dir = path.Dir(dir) {
		if e, ok := merged[dir]; ok && !e.info.IsDir() {
			return true
		}
	}
	return false
}

// writeTarGz writes entries as a gzipped tar. BestSpeed: model weights barely
// compress, and the default level costs three times the CPU for a few percent.
func writeTarGz(w io.Writer, entries []entry) error {
	zw, err := gzip.NewWriterLevel(w, gzip.BestSpeed)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(zw)
	for _, e := range entries {
		if err := addToTar(tw, e); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return zw.Close()
}

func addToTar(tw *tar.Writer, e entry) error {
	hdr, err := tar.FileInfoHeader(e.info, "")
	if err != nil {
		return err
	}
	hdr.Name = e.rel
	if e.info.IsDir() {
		hdr.Name += "/"
	}
	hdr.Uname, hdr.Gname = "", ""
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	if e.info.IsDir() {
		return nil
	}
	f, err := os.Open(e.path)
	if err != nil {
		return err
	}
	defer f.Close()
	// A file that grows while it is archived must not break the tar's framing.
	n, err := io.Copy(tw, io.LimitReader(f, hdr.Size))
	if err == nil && n != hdr.Size {
		err = fmt.Errorf("%s shrank while it was archived", e.path)
	}
	return err
}

// writeLocalArchive writes the archive beside its final name and renames it,
// so a reader never sees half an archive.
func writeLocalArchive(dst string, entries []entry) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return localCause(err)
	}
	f, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".*")
	if err != nil {
		return localCause(err)
	}
	defer os.Remove(f.Name())
	if err := writeTarGz(f, entries); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Chmod(f.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(f.Name(), dst)
}

// uploadTarGz streams the archive through a pipe into the transfer manager's
// multipart upload: memory holds only the parts in flight.
func (s *Store) uploadTarGz(ctx context.Context, loc location, entries []entry) error {
	pr, pw := io.Pipe()
	written := make(chan error, 1)
	go func() {
		err := writeTarGz(pw, entries)
		pw.CloseWithError(err)
		written <- err
	}()
	_, err := s.tm.UploadObject(ctx, &tm.UploadObjectInput{
		Bucket: aws.String(loc.bucket),
		Key:    aws.String(loc.key),
		Body:   pr,
	})
	pr.CloseWithError(errors.New("upload ended")) // unblocks the writer if the upload failed
	if werr := <-written; werr != nil && err == nil {
		return localCause(werr)
	}
	return s.explain(err, loc.bucket)
}

func (s *Store) uploadFile(ctx context.Context, bucket, key, file string) error {
	f, err := os.Open(file)
	if err != nil {
		return localCause(err)
	}
	defer f.Close()
	_, err = s.tm.UploadObject(ctx, &tm.UploadObjectInput{Bucket: &bucket, Key: &key, Body: f})
	return err
}

// UploadDir makes the prefix uri hold the files under dir: new and changed
// files are uploaded (overwriting), and objects under the prefix with no file
// of their name are deleted, as SageMaker's checkpoint sync does. A file is
// unchanged when its size and modification time are those it had when this
// Store last uploaded it and the object is still there with that size; local
// stamps only, so a clock that differs from S3's cannot hide a change. A
// missing dir changes nothing, so a job that never wrote checkpoints does not
// erase earlier ones.
func (s *Store) UploadDir(ctx context.Context, uri, dir string) error {
	if err := s.uploadDir(ctx, uri, dir); err != nil {
		return fmt.Errorf("upload %s to %s: %w", dir, uri, err)
	}
	return nil
}

// stamp is what tells a file unchanged since its last upload.
type stamp struct {
	size  int64
	mtime time.Time
}

func (s *Store) uploadDir(ctx context.Context, uri, dir string) error {
	loc, err := parseURI(uri)
	if err != nil {
		return err
	}
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if loc.local() {
		return localCause(mirrorLocal(dir, loc.path))
	}
	files, err := localFiles(dir)
	if err != nil {
		return localCause(err)
	}
	stamps := make(map[string]stamp, len(files))
	for rel, p := range files {
		if info, err := os.Stat(p); err == nil {
			stamps[rel] = stamp{info.Size(), info.ModTime()}
		}
	}
	prefix := dirPrefix(loc.key)
	existing, err := s.listObjects(ctx, loc.bucket, prefix)
	if err != nil {
		return s.explain(err, loc.bucket)
	}
	syncKey := loc.bucket + "/" + prefix
	s.mu.Lock()
	uploaded := s.uploaded[syncKey]
	s.mu.Unlock()
	changed := changedFilter{dir: dir, prefix: prefix, stamps: stamps, uploaded: uploaded, remote: existing}
	_, err = s.tm.UploadDirectory(ctx, &tm.UploadDirectoryInput{
		Bucket:    aws.String(loc.bucket),
		Source:    aws.String(dir),
		KeyPrefix: aws.String(strings.TrimSuffix(prefix, "/")),
		Recursive: aws.Bool(true),
		Filter:    changed,
	})
	if err != nil {
		s.forget(syncKey) // what is there now is unknown
		return s.explain(err, loc.bucket)
	}
	s.mu.Lock()
	s.uploaded[syncKey] = stamps
	s.mu.Unlock()
	var stale []s3types.ObjectIdentifier
	for key := range existing {
		if _, ok := files[strings.TrimPrefix(key, prefix)]; !ok {
			stale = append(stale, s3types.ObjectIdentifier{Key: aws.String(key)})
		}
	}
	slices.SortFunc(stale, func(a, b s3types.ObjectIdentifier) int { return strings.Compare(*a.Key, *b.Key) })
	return s.explain(s.deleteObjects(ctx, loc.bucket, stale), loc.bucket)
}

func (s *Store) forget(syncKey string) {
	s.mu.Lock()
	delete(s.uploaded, syncKey)
	s.mu.Unlock()
}

// changedFilter lets the directory upload skip files unchanged since this
// Store last uploaded them.
type changedFilter struct {
	dir      string
	prefix   string
	stamps   map[string]stamp // now
	uploaded map[string]stamp // at the last upload; nil if none
	remote   map[string]int64 // key -> size
}

func (f changedFilter) FilterFile(path string) bool {
	rel, err := filepath.Rel(f.dir, path)
	if err != nil {
		return true
	}
	rel = filepath.ToSlash(rel)
	now, ok := f.stamps[rel]
	if !ok {
		return true // appeared since the listing: upload it
	}
	before, ok := f.uploaded[rel]
	if !ok || !before.mtime.Equal(now.mtime) || before.size != now.size {
		return true
	}
	size, ok := f.remote[f.prefix+rel]
	return !ok || size != now.size
}

// listObjects lists key -> size below prefix.
func (s *Store) listObjects(ctx context.Context, bucket, prefix string) (map[string]int64, error) {
	objs := map[string]int64{}
	pages := s3.NewListObjectsV2Paginator(s.s3, &s3.ListObjectsV2Input{Bucket: &bucket, Prefix: &prefix})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, err
		}
		for _, o := range page.Contents {
			objs[aws.ToString(o.Key)] = aws.ToInt64(o.Size)
		}
	}
	return objs, nil
}

// deleteObjects deletes in batches of 1,000, S3's most per request.
func (s *Store) deleteObjects(ctx context.Context, bucket string, ids []s3types.ObjectIdentifier) error {
	for batch := range slices.Chunk(ids, 1000) {
		out, err := s.s3.DeleteObjects(ctx, &s3.DeleteObjectsInput{
			Bucket: &bucket,
			Delete: &s3types.Delete{Objects: batch, Quiet: aws.Bool(true)},
		})
		if err != nil {
			return err
		}
		if len(out.Errors) > 0 {
			e := out.Errors[0]
			return fmt.Errorf("delete %s: %s: %s", aws.ToString(e.Key), aws.ToString(e.Code), aws.ToString(e.Message))
		}
	}
	return nil
}

// DownloadDir copies every object under the prefix uri into dir, creating it.
// A missing prefix gives an empty dir, as for a job's first attempt.
func (s *Store) DownloadDir(ctx context.Context, uri, dir string) error {
	if err := s.downloadDir(ctx, uri, dir); err != nil {
		return fmt.Errorf("download %s to %s: %w", uri, dir, err)
	}
	return nil
}

func (s *Store) downloadDir(ctx context.Context, uri, dir string) error {
	loc, err := parseURI(uri)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if loc.local() {
		files, err := localFiles(loc.path)
		if err != nil {
			return localCause(err)
		}
		for rel, p := range files {
			target := filepath.Join(dir, filepath.FromSlash(rel))
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return err
			}
			if err := copyFile(p, target, 0o644); err != nil {
				return err
			}
		}
		return nil
	}
	prefix := dirPrefix(loc.key)
	// One listed key first: it tells a missing bucket or denied access in
	// plain words, which the directory download reports only as text.
	probe, err := s.s3.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: &loc.bucket, Prefix: &prefix, MaxKeys: aws.Int32(1)})
	if err != nil {
		return s.explain(err, loc.bucket)
	}
	if len(probe.Contents) == 0 {
		return nil
	}
	_, err = s.tm.DownloadDirectory(ctx, &tm.DownloadDirectoryInput{
		Bucket:      aws.String(loc.bucket),
		Destination: aws.String(dir),
		KeyPrefix:   aws.String(prefix),
	})
	return s.explain(err, loc.bucket)
}
