package s3server

import (
	"encoding/xml"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/sharq-dev/sharq/internal/access"
)

// bucketMarker is the file in a bucket's directory whose time is the
// bucket's creation; escaped key segments never start with '#'.
const bucketMarker = "#bucket"

// timeFormat is how S3's XML writes times.
const timeFormat = "2006-01-02T15:04:05.000Z"

type owner struct {
	ID          string
	DisplayName string
}

var theOwner = owner{ID: "sharq", DisplayName: "sharq"}

type bucketEntry struct {
	Name         string
	CreationDate string
}

type listBucketsResult struct {
	XMLName xml.Name      `xml:"http://s3.amazonaws.com/doc/2006-03-01/ ListAllMyBucketsResult"`
	Owner   owner         `xml:"Owner"`
	Buckets []bucketEntry `xml:"Buckets>Bucket"`
}

func (s *Server) listBuckets(w http.ResponseWriter, r *http.Request) error {
	if err := s.authorize(r, "ListAllMyBuckets", "", ""); err != nil {
		return err
	}
	entries, err := os.ReadDir(s.buckets)
	if err != nil {
		return err
	}
	res := listBucketsResult{Owner: theOwner, Buckets: []bucketEntry{}}
	for _, e := range entries {
		if !e.IsDir() || !validBucket(e.Name()) {
			continue
		}
		res.Buckets = append(res.Buckets, bucketEntry{Name: e.Name(), CreationDate: s.created(e.Name()).Format(timeFormat)})
	}
	writeXML(w, res)
	return nil
}

func (s *Server) created(bucket string) time.Time {
	st, err := os.Stat(filepath.Join(s.buckets, bucket, bucketMarker))
	if err != nil {
		st, err = os.Stat(filepath.Join(s.buckets, bucket))
	}
	if err != nil {
		return time.Time{}
	}
	return st.ModTime().UTC()
}

func (s *Server) createBucket(w http.ResponseWriter, r *http.Request, bucket string) error {
	if err := s.authorize(r, "CreateBucket", bucket, ""); err != nil {
		return err
	}
	// The body names a location constraint; every bucket here is in the
	// server's one region.
	if _, err := io.Copy(io.Discard, io.LimitReader(r.Body, 64<<10)); err != nil {
		return bodyError(err)
	}
	dir := filepath.Join(s.buckets, bucket)
	if err := os.Mkdir(dir, 0o755); errors.Is(err, fs.ErrExist) {
		return errOwnedByYou
	} else if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, bucketMarker), nil, 0o644); err != nil {
		return err
	}
	w.Header().Set("Location", "/"+bucket)
	w.WriteHeader(http.StatusOK)
	return nil
}

func (s *Server) headBucket(w http.ResponseWriter, r *http.Request, bucket string) error {
	if err := s.authorize(r, "ListBucket", bucket, ""); err != nil {
		return err
	}
	if _, err := s.bucketDir(bucket); err != nil {
		return err
	}
	w.Header().Set("X-Amz-Bucket-Region", s.opts.Region)
	w.WriteHeader(http.StatusOK)
	return nil
}

func (s *Server) deleteBucket(w http.ResponseWriter, r *http.Request, bucket string) error {
	if err := s.authorize(r, "DeleteBucket", bucket, ""); err != nil {
		return err
	}
	dir, err := s.bucketDir(bucket)
	if err != nil {
		return err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	if slices.ContainsFunc(entries, func(e fs.DirEntry) bool { return e.Name() != bucketMarker }) {
		return errBucketNotEmpty
	}
	os.Remove(filepath.Join(dir, bucketMarker))
	if err := os.Remove(dir); err != nil {
		// An object arrived meanwhile.
		os.WriteFile(filepath.Join(dir, bucketMarker), nil, 0o644)
		return errBucketNotEmpty
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) bucketLocation(w http.ResponseWriter, r *http.Request, bucket string) error {
	if err := s.authorize(r, "GetBucketLocation", bucket, ""); err != nil {
		return err
	}
	if _, err := s.bucketDir(bucket); err != nil {
		return err
	}
	loc := s.opts.Region
	if loc == "us-east-1" {
		loc = "" // as AWS answers for us-east-1
	}
	writeXML(w, struct {
		XMLName xml.Name `xml:"http://s3.amazonaws.com/doc/2006-03-01/ LocationConstraint"`
		Value   string   `xml:",chardata"`
	}{Value: loc})
	return nil
}

func (s *Server) bucketVersioning(w http.ResponseWriter, r *http.Request, bucket string) error {
	if err := s.authorize(r, "GetBucketVersioning", bucket, ""); err != nil {
		return err
	}
	if _, err := s.bucketDir(bucket); err != nil {
		return err
	}
	writeXML(w, struct {
		XMLName xml.Name `xml:"http://s3.amazonaws.com/doc/2006-03-01/ VersioningConfiguration"`
	}{})
	return nil
}

type deleteRequest struct {
	Quiet   bool
	Objects []struct {
		Key string
	} `xml:"Object"`
}

type deletedEntry struct {
	Key string
}

type deleteError struct {
	Key     string
	Code    string
	Message string
}

type deleteResult struct {
	XMLName xml.Name       `xml:"http://s3.amazonaws.com/doc/2006-03-01/ DeleteResult"`
	Deleted []deletedEntry `xml:"Deleted"`
	Errors  []deleteError  `xml:"Error"`
}

// maxDeleteBody bounds DeleteObjects' XML (1,000 keys of 1 KiB, escaped).
const maxDeleteBody = 8 << 20

func (s *Server) deleteObjects(w http.ResponseWriter, r *http.Request, bucket string) error {
	var req deleteRequest
	if err := s.readXML(r, maxDeleteBody, &req); err != nil {
		return err
	}
	if len(req.Objects) > 1000 {
		return errMalformedXML
	}
	if _, err := s.bucketDir(bucket); err != nil {
		return err
	}
	var res deleteResult
	for _, o := range req.Objects {
		err := s.authorize(r, "DeleteObject", bucket, o.Key)
		if err == nil {
			err = s.removeObject(bucket, o.Key)
		}
		var s3err *Error
		switch {
		case err == nil:
			if !req.Quiet {
				res.Deleted = append(res.Deleted, deletedEntry{Key: o.Key})
			}
		case errors.As(err, &s3err):
			res.Errors = append(res.Errors, deleteError{Key: o.Key, Code: s3err.Code, Message: s3err.Message})
		case errors.As(err, new(*access.DeniedError)):
			res.Errors = append(res.Errors, deleteError{Key: o.Key, Code: "AccessDenied", Message: err.Error()})
		default:
			s.log.Error("s3 delete", "bucket", bucket, "key", o.Key, "err", err)
			res.Errors = append(res.Errors, deleteError{Key: o.Key, Code: "InternalError", Message: "internal error"})
		}
	}
	writeXML(w, res)
	return nil
}

// readXML decodes r's (possibly aws-chunked) body of at most max bytes.
func (s *Server) readXML(r *http.Request, max int64, v any) error {
	f, got, err := receive(r, s.tmp, max)
	if err != nil {
		return err
	}
	defer func() { f.Close(); os.Remove(f.Name()) }()
	if got.size == 0 {
		return errMalformedXML
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	if err := xml.NewDecoder(f).Decode(v); err != nil {
		return errMalformedXML
	}
	return nil
}
