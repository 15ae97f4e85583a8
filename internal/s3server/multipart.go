package s3server

import (
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// A multipart upload is a directory uploads/ID holding uploadFile and one
// file per part (partFile), each in an object's format, so a part is
// streamed to disk as an object is.
const uploadFile = "upload.json"

func partFile(n int) string { return fmt.Sprintf("part-%05d", n) }

// upload is what uploadFile records.
type upload struct {
	Bucket    string            `json:"bucket"`
	Key       string            `json:"key"`
	Initiated time.Time         `json:"initiated"`
	Headers   map[string]string `json:"headers,omitempty"`
}

var uploadIDPattern = regexp.MustCompile(`^[0-9a-f]{32}$`)

// openUpload reads the upload id of bucket/key; NoSuchUpload when there
// is none (or it is another object's).
func (s *Server) openUpload(id, bucket, key string) (string, upload, error) {
	if !uploadIDPattern.MatchString(id) {
		return "", upload{}, errNoSuchUpload
	}
	dir := filepath.Join(s.uploads, id)
	b, err := os.ReadFile(filepath.Join(dir, uploadFile))
	if errors.Is(err, fs.ErrNotExist) {
		return "", upload{}, errNoSuchUpload
	}
	if err != nil {
		return "", upload{}, err
	}
	var u upload
	if err := json.Unmarshal(b, &u); err != nil {
		return "", upload{}, fmt.Errorf("upload %s: %w", id, err)
	}
	if u.Bucket != bucket || u.Key != key {
		return "", upload{}, errNoSuchUpload
	}
	return dir, u, nil
}

func (s *Server) createUpload(w http.ResponseWriter, r *http.Request, bucket, key string) error {
	if err := s.authorize(r, "PutObject", bucket, key); err != nil {
		return err
	}
	if _, _, err := s.objectPath(bucket, key); err != nil {
		return err
	}
	b, err := json.Marshal(upload{Bucket: bucket, Key: key, Initiated: s.opts.Now().UTC(), Headers: headersOf(r)})
	if err != nil {
		return err
	}
	// Made aside and renamed, so an upload is never seen without its record.
	tmp, err := os.MkdirTemp(s.tmp, "upload-*")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(tmp, uploadFile), b, 0o644); err != nil {
		os.RemoveAll(tmp)
		return err
	}
	id := newID()
	if err := os.Rename(tmp, filepath.Join(s.uploads, id)); err != nil {
		os.RemoveAll(tmp)
		return err
	}
	writeXML(w, struct {
		XMLName  xml.Name `xml:"http://s3.amazonaws.com/doc/2006-03-01/ InitiateMultipartUploadResult"`
		Bucket   string
		Key      string
		UploadID string `xml:"UploadId"`
	}{Bucket: bucket, Key: key, UploadID: id})
	return nil
}

func partNumber(v string) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > maxParts {
		return 0, errInvalidArgument("Part number must be an integer between 1 and 10000, inclusive")
	}
	return n, nil
}

// partTarget authorizes a part's write and finds where it goes: its
// number and its upload's directory (UploadPart and UploadPartCopy).
func (s *Server) partTarget(r *http.Request, bucket, key string) (int, string, error) {
	if err := s.authorize(r, "PutObject", bucket, key); err != nil {
		return 0, "", err
	}
	q := r.URL.Query()
	n, err := partNumber(q.Get("partNumber"))
	if err != nil {
		return 0, "", err
	}
	dir, _, err := s.openUpload(q.Get("uploadId"), bucket, key)
	return n, dir, err
}

func (s *Server) uploadPart(w http.ResponseWriter, r *http.Request, bucket, key string) error {
	n, dir, err := s.partTarget(r, bucket, key)
	if err != nil {
		return err
	}
	f, got, err := receive(r, s.tmp, maxPartSize)
	if err != nil {
		return err
	}
	m := meta{ETag: got.etag()}
	if err := s.finish(f, m, filepath.Join(dir, partFile(n))); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return errNoSuchUpload // aborted meanwhile
		}
		return err
	}
	w.Header().Set("ETag", m.ETag)
	w.WriteHeader(http.StatusOK)
	return nil
}

type completeRequest struct {
	Parts []struct {
		PartNumber int
		ETag       string
	} `xml:"Part"`
}

// maxCompleteBody bounds CompleteMultipartUpload's XML (10,000 parts).
const maxCompleteBody = 4 << 20

func (s *Server) completeUpload(w http.ResponseWriter, r *http.Request, bucket, key string) error {
	if err := s.authorize(r, "PutObject", bucket, key); err != nil {
		return err
	}
	_, path, err := s.objectPath(bucket, key)
	if err != nil {
		return err
	}
	dir, u, err := s.openUpload(r.URL.Query().Get("uploadId"), bucket, key)
	if err != nil {
		return err
	}
	var req completeRequest
	if err := s.readXML(r, maxCompleteBody, &req); err != nil {
		return err
	}
	if len(req.Parts) == 0 {
		return errMalformedXML
	}
	parts, err := openParts(dir, req)
	defer func() {
		for _, p := range parts {
			p.f.Close()
		}
	}()
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(s.tmp, "complete-*")
	if err != nil {
		return err
	}
	sums := md5.New()
	for _, p := range parts {
		sum, _ := hex.DecodeString(strings.Trim(p.meta.ETag, `"`))
		sums.Write(sum)
		// A file-to-file copy: the kernel moves the bytes (copy_file_range).
		if _, err = io.Copy(f, &io.LimitedReader{R: p.f, N: p.size}); err != nil {
			break
		}
	}
	if err != nil {
		f.Close()
		os.Remove(f.Name())
		return err
	}
	m := meta{ETag: fmt.Sprintf(`"%x-%d"`, sums.Sum(nil), len(parts)), Headers: u.Headers}
	if err := s.finish(f, m, path); err != nil {
		return err
	}
	os.RemoveAll(dir)
	writeXML(w, struct {
		XMLName  xml.Name `xml:"http://s3.amazonaws.com/doc/2006-03-01/ CompleteMultipartUploadResult"`
		Location string
		Bucket   string
		Key      string
		ETag     string
	}{Location: "/" + bucket + "/" + key, Bucket: bucket, Key: key, ETag: m.ETag})
	return nil
}

// openParts opens the parts req lists, in order, checking them as S3
// does; the parts opened are returned even on error, to be closed.
func openParts(dir string, req completeRequest) ([]*object, error) {
	for i, p := range req.Parts {
		if i > 0 && p.PartNumber <= req.Parts[i-1].PartNumber {
			return nil, errInvalidPartOrd
		}
		if p.PartNumber < 1 || p.PartNumber > maxParts {
			return nil, errInvalidPart
		}
	}
	var parts []*object
	for i, p := range req.Parts {
		o, err := openObject(filepath.Join(dir, partFile(p.PartNumber)))
		if errors.Is(err, fs.ErrNotExist) {
			return parts, errInvalidPart
		}
		if err != nil {
			return parts, err
		}
		parts = append(parts, o)
		if strings.Trim(p.ETag, `"`) != strings.Trim(o.meta.ETag, `"`) {
			return parts, errInvalidPart
		}
		if i < len(req.Parts)-1 && o.size < minPartSize {
			return parts, errEntityTooSmall
		}
	}
	return parts, nil
}

func (s *Server) abortUpload(w http.ResponseWriter, r *http.Request, bucket, key string) error {
	if err := s.authorize(r, "AbortMultipartUpload", bucket, key); err != nil {
		return err
	}
	dir, _, err := s.openUpload(r.URL.Query().Get("uploadId"), bucket, key)
	if err != nil {
		return err
	}
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

type partEntry struct {
	PartNumber   int
	LastModified string
	ETag         string
	Size         int64
}

func (s *Server) listParts(w http.ResponseWriter, r *http.Request, bucket, key string) error {
	if err := s.authorize(r, "ListMultipartUploadParts", bucket, key); err != nil {
		return err
	}
	q := r.URL.Query()
	dir, _, err := s.openUpload(q.Get("uploadId"), bucket, key)
	if err != nil {
		return err
	}
	marker, _ := strconv.Atoi(q.Get("part-number-marker"))
	maxParts := 1000
	if v, err := strconv.Atoi(q.Get("max-parts")); err == nil && v >= 0 && v < maxParts {
		maxParts = v
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	res := struct {
		XMLName              xml.Name `xml:"http://s3.amazonaws.com/doc/2006-03-01/ ListPartsResult"`
		Bucket               string
		Key                  string
		UploadID             string `xml:"UploadId"`
		PartNumberMarker     int
		NextPartNumberMarker int
		MaxParts             int
		IsTruncated          bool
		StorageClass         string
		Parts                []partEntry `xml:"Part"`
	}{Bucket: bucket, Key: key, UploadID: q.Get("uploadId"), PartNumberMarker: marker, MaxParts: maxParts, StorageClass: "STANDARD"}
	for _, e := range entries { // in name order: part-00001, part-00002, ...
		v, ok := strings.CutPrefix(e.Name(), "part-")
		n, err := strconv.Atoi(v)
		if !ok || err != nil || n <= marker {
			continue
		}
		if len(res.Parts) == maxParts {
			res.IsTruncated = true
			break
		}
		o, err := openObject(filepath.Join(dir, e.Name()))
		if err != nil {
			continue // replaced or aborted meanwhile
		}
		o.f.Close()
		res.Parts = append(res.Parts, partEntry{PartNumber: n, LastModified: o.modTime.UTC().Format(timeFormat), ETag: o.meta.ETag, Size: o.size})
		res.NextPartNumberMarker = n
	}
	writeXML(w, res)
	return nil
}

type uploadEntry struct {
	Key          string
	UploadID     string `xml:"UploadId"`
	Initiated    string
	StorageClass string
}

func (s *Server) listUploads(w http.ResponseWriter, r *http.Request, bucket string) error {
	if err := s.authorize(r, "ListBucketMultipartUploads", bucket, ""); err != nil {
		return err
	}
	if _, err := s.bucketDir(bucket); err != nil {
		return err
	}
	prefix := r.URL.Query().Get("prefix")
	var list []uploadEntry
	err := s.eachUpload(func(id string, u upload, ok bool) error {
		if ok && u.Bucket == bucket && strings.HasPrefix(u.Key, prefix) {
			list = append(list, uploadEntry{Key: u.Key, UploadID: id, Initiated: u.Initiated.Format(timeFormat), StorageClass: "STANDARD"})
		}
		return nil
	})
	if err != nil {
		return err
	}
	slices.SortFunc(list, func(a, b uploadEntry) int { return strings.Compare(a.Key+"/"+a.UploadID, b.Key+"/"+b.UploadID) })
	writeXML(w, struct {
		XMLName     xml.Name `xml:"http://s3.amazonaws.com/doc/2006-03-01/ ListMultipartUploadsResult"`
		Bucket      string
		Prefix      string
		MaxUploads  int
		IsTruncated bool
		Uploads     []uploadEntry `xml:"Upload"`
	}{Bucket: bucket, Prefix: prefix, MaxUploads: 1000, Uploads: list})
	return nil
}

// eachUpload calls fn for every upload directory, with its record (ok
// false when it cannot be read).
func (s *Server) eachUpload(fn func(id string, u upload, ok bool) error) error {
	entries, err := os.ReadDir(s.uploads)
	if err != nil {
		return err
	}
	for _, e := range entries {
		var u upload
		b, err := os.ReadFile(filepath.Join(s.uploads, e.Name(), uploadFile))
		ok := err == nil && json.Unmarshal(b, &u) == nil
		if err := fn(e.Name(), u, ok); err != nil {
			return err
		}
	}
	return nil
}

// CleanUploads removes the multipart uploads begun more than UploadTTL
// ago and never completed nor aborted, with their parts, and says how
// many.
func (s *Server) CleanUploads() (int, error) {
	cutoff := s.opts.Now().Add(-s.opts.UploadTTL)
	removed := 0
	err := s.eachUpload(func(id string, u upload, ok bool) error {
		if !ok {
			u.Initiated = time.Time{} // unreadable: left by a crash
		}
		if u.Initiated.Before(cutoff) {
			if err := os.RemoveAll(filepath.Join(s.uploads, id)); err != nil {
				return err
			}
			removed++
		}
		return nil
	})
	return removed, err
}
