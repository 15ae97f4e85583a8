package s3server

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// storedHeaders are the request headers kept with an object and sent back
// with it, besides x-amz-meta-*.
var storedHeaders = []string{"Content-Type", "Content-Encoding", "Content-Disposition", "Content-Language",
	"Cache-Control", "Expires"}

// headersOf are the headers of r to keep with its object.
func headersOf(r *http.Request) map[string]string {
	h := map[string]string{}
	for _, name := range storedHeaders {
		if v := r.Header.Get(name); v != "" {
			h[name] = v
		}
	}
	// aws-chunked frames the upload; it is not the object's encoding.
	if ce, ok := h["Content-Encoding"]; ok {
		var keep []string
		for _, e := range strings.Split(ce, ",") {
			if e = strings.TrimSpace(e); e != "" && e != "aws-chunked" {
				keep = append(keep, e)
			}
		}
		if len(keep) == 0 {
			delete(h, "Content-Encoding")
		} else {
			h["Content-Encoding"] = strings.Join(keep, ",")
		}
	}
	for name, v := range r.Header {
		if strings.HasPrefix(strings.ToLower(name), "x-amz-meta-") && len(v) > 0 {
			h[http.CanonicalHeaderKey(name)] = v[0]
		}
	}
	if _, ok := h["Content-Type"]; !ok {
		h["Content-Type"] = "binary/octet-stream"
	}
	return h
}

func (s *Server) putObject(w http.ResponseWriter, r *http.Request, bucket, key string) error {
	if err := s.authorize(r, "PutObject", bucket, key); err != nil {
		return err
	}
	_, path, err := s.objectPath(bucket, key)
	if err != nil {
		return err
	}
	f, got, err := receive(r, s.tmp, maxObjectSize)
	if err != nil {
		return err
	}
	m := meta{ETag: got.etag(), Headers: headersOf(r)}
	if err := s.finish(f, m, path); err != nil {
		return err
	}
	w.Header().Set("ETag", m.ETag)
	w.WriteHeader(http.StatusOK)
	return nil
}

// finish appends m to the received file f and renames it to path.
func (s *Server) finish(f *os.File, m meta, path string) error {
	err := appendMeta(f, m)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = place(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}

func (s *Server) getObject(w http.ResponseWriter, r *http.Request, bucket, key string) error {
	if err := s.authorize(r, "GetObject", bucket, key); err != nil {
		return err
	}
	_, path, err := s.objectPath(bucket, key)
	if errors.Is(err, errKeyTooLong) {
		return errNoSuchKey // nothing can be stored there
	}
	if err != nil {
		return err
	}
	o, err := openObject(path)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrInvalid) {
		return errNoSuchKey
	}
	if err != nil {
		return err
	}
	defer o.f.Close()
	h := w.Header()
	for k, v := range o.meta.Headers {
		h.Set(k, v)
	}
	h.Set("ETag", o.meta.ETag)
	h.Set("Last-Modified", o.modTime.UTC().Format(http.TimeFormat))
	h.Set("Accept-Ranges", "bytes")
	off, n, partial, err := byteRange(r.Header.Get("Range"), o.size)
	if err != nil {
		return err
	}
	h.Set("Content-Length", strconv.FormatInt(n, 10))
	if partial {
		h.Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", off, off+n-1, o.size))
		w.WriteHeader(http.StatusPartialContent)
	} else {
		w.WriteHeader(http.StatusOK)
	}
	if r.Method == http.MethodHead {
		return nil
	}
	// The status is sent: a failure now can only cut the body short. A
	// file limited to the range lets the kernel send it (sendfile) over
	// plain HTTP.
	_, err = o.f.Seek(off, io.SeekStart)
	if err == nil {
		_, err = io.Copy(innermost(w), io.LimitReader(o.f, n))
	}
	if err != nil {
		s.log.Debug("s3 get", "bucket", bucket, "key", key, "err", err)
	}
	return nil
}

// innermost is the writer under w's wrappers (which record the status,
// already written), where net/http's own can hand a file to the kernel.
func innermost(w http.ResponseWriter) io.Writer {
	for {
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			return w
		}
		w = u.Unwrap()
	}
}

// byteRange reads a Range header (one range: a-b, a- or -n) against an
// object of size bytes: the offset and length to send, and whether it is
// a part. A header S3 ignores (several ranges, not bytes) sends the whole.
func byteRange(header string, size int64) (off, n int64, partial bool, err error) {
	spec, ok := strings.CutPrefix(header, "bytes=")
	if header == "" || !ok || strings.Contains(spec, ",") {
		return 0, size, false, nil
	}
	first, last, ok := strings.Cut(strings.TrimSpace(spec), "-")
	if !ok {
		return 0, size, false, nil
	}
	invalid := errorf(http.StatusRequestedRangeNotSatisfiable, "InvalidRange", "The requested range is not satisfiable")
	if first == "" {
		k, err := strconv.ParseInt(last, 10, 64)
		if err != nil || k < 0 {
			return 0, size, false, nil
		}
		if k == 0 {
			return 0, 0, false, invalid
		}
		k = min(k, size)
		return size - k, k, true, nil
	}
	a, err := strconv.ParseInt(first, 10, 64)
	if err != nil || a < 0 {
		return 0, size, false, nil
	}
	b := size - 1
	if last != "" {
		if b, err = strconv.ParseInt(last, 10, 64); err != nil || b < a {
			return 0, size, false, nil
		}
		b = min(b, size-1)
	}
	if a >= size {
		return 0, 0, false, invalid
	}
	return a, b - a + 1, true, nil
}

func (s *Server) deleteObject(w http.ResponseWriter, r *http.Request, bucket, key string) error {
	if err := s.authorize(r, "DeleteObject", bucket, key); err != nil {
		return err
	}
	if err := s.removeObject(bucket, key); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// removeObject deletes key's object, if any (S3 answers a delete of a
// missing key as a success), and the directories it leaves empty.
func (s *Server) removeObject(bucket, key string) error {
	dir, path, err := s.objectPath(bucket, key)
	if errors.Is(err, errKeyTooLong) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	removeEmptyParents(filepath.Dir(path), dir)
	return nil
}
