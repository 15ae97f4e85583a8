package s3server

import (
	"crypto/md5"
	"encoding/hex"
	"encoding/xml"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
)

// copySource is the bucket and key of x-amz-copy-source ("bucket/key" or
// "/bucket/key", URL-escaped; a versionId is refused: nothing here is
// versioned).
func copySource(r *http.Request) (bucket, key string, err error) {
	v := r.Header.Get("X-Amz-Copy-Source")
	if p, q, ok := strings.Cut(v, "?"); ok {
		if strings.Contains(q, "versionId=") && !strings.Contains(q, "versionId=null") {
			return "", "", errInvalidArgument("sharq's S3 keeps no versions")
		}
		v = p
	}
	v, err = url.PathUnescape(v)
	if err != nil {
		return "", "", errInvalidArgument("Invalid copy source encoding")
	}
	bucket, key, _ = strings.Cut(strings.TrimPrefix(v, "/"), "/")
	if !validBucket(bucket) || key == "" {
		return "", "", errInvalidArgument("Copy Source must mention the source bucket and key: sourcebucket/sourcekey")
	}
	return bucket, key, nil
}

// openSource authorizes reading the copy source and opens it.
func (s *Server) openSource(r *http.Request) (*object, error) {
	bucket, key, err := copySource(r)
	if err != nil {
		return nil, err
	}
	if err := s.authorize(r, "GetObject", bucket, key); err != nil {
		return nil, err
	}
	_, path, err := s.objectPath(bucket, key)
	if errors.Is(err, errKeyTooLong) {
		return nil, errNoSuchKey
	}
	if err != nil {
		return nil, err
	}
	o, err := openObject(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, errNoSuchKey
	}
	return o, err
}

// copyToTemp copies from into a new file of the server's temporary
// folder, named after pattern, for finish to place; on error it leaves no
// file behind.
func (s *Server) copyToTemp(pattern string, from io.Reader) (*os.File, error) {
	f, err := os.CreateTemp(s.tmp, pattern)
	if err != nil {
		return nil, err
	}
	if _, err := io.Copy(f, from); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	return f, nil
}

type copyResult struct {
	ETag         string
	LastModified string
}

// copyObject serves CopyObject: the source's data (and, unless
// x-amz-metadata-directive is REPLACE, its headers) as a new object.
func (s *Server) copyObject(w http.ResponseWriter, r *http.Request, bucket, key string) error {
	if err := s.authorize(r, "PutObject", bucket, key); err != nil {
		return err
	}
	_, path, err := s.objectPath(bucket, key)
	if err != nil {
		return err
	}
	src, err := s.openSource(r)
	if err != nil {
		return err
	}
	defer src.f.Close()
	m := meta{ETag: src.meta.ETag, Headers: src.meta.Headers}
	if strings.EqualFold(r.Header.Get("X-Amz-Metadata-Directive"), "REPLACE") {
		m.Headers = headersOf(r)
	}
	// A file-to-file copy: the kernel moves the bytes.
	f, err := s.copyToTemp("copy-*", io.LimitReader(src.f, src.size))
	if err != nil {
		return err
	}
	if err := s.finish(f, m, path); err != nil {
		return err
	}
	writeXML(w, struct {
		XMLName xml.Name `xml:"http://s3.amazonaws.com/doc/2006-03-01/ CopyObjectResult"`
		copyResult
	}{copyResult: copyResult{ETag: m.ETag, LastModified: s.opts.Now().UTC().Format(timeFormat)}})
	return nil
}

// uploadPartCopy serves UploadPartCopy: a part made of the source's
// bytes, all or x-amz-copy-source-range's.
func (s *Server) uploadPartCopy(w http.ResponseWriter, r *http.Request, bucket, key string) error {
	n, dir, err := s.partTarget(r, bucket, key)
	if err != nil {
		return err
	}
	src, err := s.openSource(r)
	if err != nil {
		return err
	}
	defer src.f.Close()
	off, size := int64(0), src.size
	if v := r.Header.Get("X-Amz-Copy-Source-Range"); v != "" {
		var partial bool
		if off, size, partial, err = byteRange(v, src.size); err != nil || !partial {
			return errInvalidArgument("The x-amz-copy-source-range value must be of the form bytes=first-last where first and last are the zero-based offsets of the first and last bytes to copy")
		}
	}
	if size > maxPartSize {
		return errEntityTooLarge
	}
	sum := md5.New()
	f, err := s.copyToTemp("part-*", io.TeeReader(io.NewSectionReader(src.f, off, size), sum))
	if err != nil {
		return err
	}
	m := meta{ETag: `"` + hex.EncodeToString(sum.Sum(nil)) + `"`}
	if err := s.finish(f, m, filepath.Join(dir, partFile(n))); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return errNoSuchUpload
		}
		return err
	}
	writeXML(w, struct {
		XMLName xml.Name `xml:"http://s3.amazonaws.com/doc/2006-03-01/ CopyPartResult"`
		copyResult
	}{copyResult: copyResult{ETag: m.ETag, LastModified: s.opts.Now().UTC().Format(timeFormat)}})
	return nil
}
