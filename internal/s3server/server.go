package s3server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sharq-dev/sharq/internal/access"
)

// Options configure a Server.
type Options struct {
	// Dir keeps the buckets (Dir/buckets/NAME), unfinished multipart
	// uploads (Dir/uploads) and bodies being received (Dir/tmp).
	Dir string
	// Authorizer decides every operation (default: allow all).
	Authorizer access.Authorizer
	// Region is the buckets' region, as HeadBucket and GetBucketLocation
	// tell it (default us-east-1).
	Region string
	// UploadTTL is how long a multipart upload may stay unfinished before
	// CleanUploads removes it (default a day).
	UploadTTL time.Duration
	// VirtualHosts are the host names under which BUCKET.HOST names a
	// bucket, virtual-hosted style (default localhost).
	VirtualHosts []string
	// Logger logs internal errors (default: discard).
	Logger *slog.Logger
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Limits S3 sets on what it stores.
const (
	maxObjectSize = 5 << 40 // one PUT may be 5 GiB on AWS; sharq lets one be as large as an object
	maxPartSize   = 5 << 30
	minPartSize   = 5 << 20 // every part but the last
	maxParts      = 10000
)

// Server serves the S3 API for the buckets under its directory. It is safe
// for concurrent use.
type Server struct {
	opts                  Options
	buckets, uploads, tmp string
	authz                 access.Authorizer
	log                   *slog.Logger
}

// New makes the server's directories, and removes the bodies a killed
// server left half received.
func New(opts Options) (*Server, error) {
	if opts.Dir == "" {
		return nil, errors.New("s3server: no directory")
	}
	if opts.Region == "" {
		opts.Region = "us-east-1"
	}
	if opts.UploadTTL <= 0 {
		opts.UploadTTL = 24 * time.Hour
	}
	if len(opts.VirtualHosts) == 0 {
		opts.VirtualHosts = []string{"localhost"}
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	s := &Server{opts: opts, buckets: filepath.Join(opts.Dir, "buckets"), uploads: filepath.Join(opts.Dir, "uploads"),
		tmp: filepath.Join(opts.Dir, "tmp"), authz: opts.Authorizer, log: opts.Logger}
	if s.authz == nil {
		s.authz = access.AllowAll{}
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	for _, d := range []string{s.buckets, s.uploads, s.tmp} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, fmt.Errorf("s3server: %w", err)
		}
	}
	if _, err := s.cleanTmp(); err != nil {
		return nil, fmt.Errorf("s3server: %w", err)
	}
	return s, nil
}

// WithAuthorizer is a Server on the same buckets whose operations authz
// decides, e.g. for a listener only the server itself uses.
func (s *Server) WithAuthorizer(authz access.Authorizer) *Server {
	c := *s
	c.authz = authz
	return &c
}

// Run removes multipart uploads unfinished for longer than UploadTTL,
// and bodies left half received, every hour until ctx ends.
func (s *Server) Run(ctx context.Context) {
	t := time.NewTicker(time.Hour)
	defer t.Stop()
	for {
		if n, err := s.CleanUploads(); err != nil {
			s.log.Warn("remove abandoned multipart uploads", "err", err)
		} else if n > 0 {
			s.log.Info("removed abandoned multipart uploads", "count", n)
		}
		if n, err := s.cleanTmp(); err != nil {
			s.log.Warn("remove bodies left half received", "err", err)
		} else if n > 0 {
			s.log.Info("removed bodies left half received", "count", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// staleTmp is how long a body being received may go unwritten before it
// counts as left by a server that died: a live one is written to all the
// time, and servers that share a data dir (a shared store) share tmp.
const staleTmp = time.Hour

// cleanTmp removes what tmp holds unchanged for staleTmp, and says how
// many it removed.
func (s *Server) cleanTmp() (int, error) {
	entries, err := os.ReadDir(s.tmp)
	if err != nil {
		return 0, err
	}
	cutoff, n := s.opts.Now().Add(-staleTmp), 0
	for _, e := range entries {
		info, err := e.Info()
		if err != nil || info.ModTime().After(cutoff) {
			continue
		}
		if err := os.RemoveAll(filepath.Join(s.tmp, e.Name())); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// VirtualBucket is the bucket r's Host names virtual-hosted style
// (BUCKET.localhost:PORT), "" for none.
func (s *Server) VirtualBucket(r *http.Request) string {
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	for _, v := range s.opts.VirtualHosts {
		if b, ok := strings.CutSuffix(host, "."+v); ok && b != "" {
			return b
		}
	}
	return ""
}

// target is the bucket and key r names, path-style or virtual-hosted.
func (s *Server) target(r *http.Request) (bucket, key string) {
	path := strings.TrimPrefix(r.URL.Path, "/")
	if b := s.VirtualBucket(r); b != "" {
		return b, path
	}
	bucket, key, _ = strings.Cut(path, "/")
	return bucket, key
}

// ServeHTTP serves one S3 operation.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Amz-Request-Id", newID())
	w.Header().Set("Server", "sharq")
	bucket, key := s.target(r)
	var err error
	switch {
	case bucket == "" && r.Method == http.MethodGet:
		err = s.listBuckets(w, r)
	case bucket == "":
		err = errMethodNotAllow
	case !validBucket(bucket):
		err = errInvalidBucket
	case key == "":
		err = s.serveBucket(w, r, bucket)
	default:
		err = s.serveObject(w, r, bucket, key)
	}
	if err != nil {
		s.writeError(w, r, err)
	}
}

func (s *Server) serveBucket(w http.ResponseWriter, r *http.Request, bucket string) error {
	q := r.URL.Query()
	switch r.Method {
	case http.MethodPut:
		if sub := subresource(q, "acl", "policy", "tagging", "versioning", "cors", "lifecycle", "encryption"); sub != "" {
			return notImplemented(sub)
		}
		return s.createBucket(w, r, bucket)
	case http.MethodHead:
		return s.headBucket(w, r, bucket)
	case http.MethodDelete:
		return s.deleteBucket(w, r, bucket)
	case http.MethodPost:
		if q.Has("delete") {
			return s.deleteObjects(w, r, bucket)
		}
	case http.MethodGet:
		switch {
		case q.Has("location"):
			return s.bucketLocation(w, r, bucket)
		case q.Has("uploads"):
			return s.listUploads(w, r, bucket)
		case q.Has("versioning"):
			return s.bucketVersioning(w, r, bucket)
		case q.Get("list-type") == "2":
			return s.listObjects(w, r, bucket, true)
		}
		if sub := subresource(q, "acl", "policy", "tagging", "cors", "lifecycle", "encryption", "versions", "website", "logging", "notification", "replication", "object-lock", "ownershipControls", "accelerate", "requestPayment", "publicAccessBlock"); sub != "" {
			return notImplemented(sub)
		}
		return s.listObjects(w, r, bucket, false)
	}
	return errMethodNotAllow
}

func (s *Server) serveObject(w http.ResponseWriter, r *http.Request, bucket, key string) error {
	q := r.URL.Query()
	if sub := subresource(q, "acl", "tagging", "retention", "legal-hold", "torrent", "restore", "select", "attributes"); sub != "" {
		return notImplemented(sub)
	}
	switch r.Method {
	case http.MethodPut:
		copying := r.Header.Get("X-Amz-Copy-Source") != ""
		switch {
		case q.Has("uploadId") && copying:
			return s.uploadPartCopy(w, r, bucket, key)
		case q.Has("uploadId"):
			return s.uploadPart(w, r, bucket, key)
		case copying:
			return s.copyObject(w, r, bucket, key)
		}
		return s.putObject(w, r, bucket, key)
	case http.MethodGet:
		if q.Has("uploadId") {
			return s.listParts(w, r, bucket, key)
		}
		return s.getObject(w, r, bucket, key)
	case http.MethodHead:
		return s.getObject(w, r, bucket, key)
	case http.MethodDelete:
		if q.Has("uploadId") {
			return s.abortUpload(w, r, bucket, key)
		}
		return s.deleteObject(w, r, bucket, key)
	case http.MethodPost:
		switch {
		case q.Has("uploads"):
			return s.createUpload(w, r, bucket, key)
		case q.Has("uploadId"):
			return s.completeUpload(w, r, bucket, key)
		}
	}
	return errMethodNotAllow
}

func subresource(q map[string][]string, names ...string) string {
	for _, n := range names {
		if _, ok := q[n]; ok {
			return n
		}
	}
	return ""
}

func notImplemented(what string) error {
	return errorf(http.StatusNotImplemented, "NotImplemented", "sharq's S3 does not implement this operation (%s).", what)
}

// authorize asks whether the caller may perform action on the S3
// resource bucket or bucket/key.
func (s *Server) authorize(r *http.Request, action, bucket, key string) error {
	res := access.AnyResource
	if bucket != "" {
		res = "arn:aws:s3:::" + bucket
		if key != "" {
			res += "/" + key
		}
	}
	return s.authz.Authorize(r.Context(), access.Caller(r.Context()), "s3:"+action, res)
}

// bucketDir is bucket's directory, or NoSuchBucket.
func (s *Server) bucketDir(bucket string) (string, error) {
	dir := filepath.Join(s.buckets, bucket)
	st, err := os.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) || err == nil && !st.IsDir() {
		return "", errNoSuchBucket
	}
	return dir, err
}

// objectPath is key's file in bucket: NoSuchBucket, or KeyTooLongError
// for a key that cannot be stored.
func (s *Server) objectPath(bucket, key string) (dir, path string, err error) {
	dir, err = s.bucketDir(bucket)
	if err != nil {
		return "", "", err
	}
	rel, err := keyPath(key)
	if err != nil {
		return "", "", err
	}
	return dir, filepath.Join(dir, rel), nil
}

func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	var s3err *Error
	var denied *access.DeniedError
	var auth *access.AuthError
	switch {
	case errors.As(err, &s3err):
		WriteError(w, r, s3err.Status, s3err.Code, s3err.Message)
	case errors.As(err, &denied):
		WriteError(w, r, http.StatusForbidden, "AccessDenied", denied.Error())
	case errors.As(err, &auth):
		WriteError(w, r, cmpOr(auth.Status, http.StatusForbidden), auth.Code, auth.Message)
	default:
		s.log.Error("s3", "method", r.Method, "path", r.URL.Path, "err", err)
		WriteError(w, r, http.StatusInternalServerError, "InternalError", "We encountered an internal error. Please try again.")
	}
}

func cmpOr(a, b int) int {
	if a != 0 {
		return a
	}
	return b
}

// newID is a random identifier: request IDs, upload IDs.
func newID() string {
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b)
}
