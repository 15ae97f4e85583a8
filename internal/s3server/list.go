package s3server

import (
	"encoding/base64"
	"encoding/xml"
	"errors"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// walker visits a bucket's objects in S3's order (by the bytes of their
// keys) from after, within prefix, skipping the keys under skip.
type walker struct {
	prefix, after, skip string
	// visit is called for each key; false stops the walk.
	visit func(key, path string) (bool, error)
}

type dirEntry struct {
	order string // the key, or the key prefix with its "/" for a directory
	name  string
	dir   bool
}

// walk visits the directory dir, whose keys start with keyPrefix; false
// when the walk was stopped.
func (w *walker) walk(dir, keyPrefix string) (bool, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return true, nil // removed meanwhile: it held nothing
	}
	if err != nil {
		return false, err
	}
	list := make([]dirEntry, 0, len(entries))
	for _, e := range entries {
		name, isObject := strings.CutSuffix(e.Name(), objectSuffix)
		seg, ok := unescapeSegment(name)
		switch {
		case !ok || e.Name() == bucketMarker:
		case isObject && !e.IsDir():
			list = append(list, dirEntry{order: keyPrefix + seg, name: e.Name()})
		case !isObject && e.IsDir():
			list = append(list, dirEntry{order: keyPrefix + seg + "/", name: e.Name(), dir: true})
		}
	}
	slices.SortFunc(list, func(a, b dirEntry) int { return strings.Compare(a.order, b.order) })
	for _, e := range list {
		k := e.order
		if w.skip != "" && strings.HasPrefix(k, w.skip) {
			continue
		}
		if e.dir {
			inPrefix := strings.HasPrefix(k, w.prefix) || strings.HasPrefix(w.prefix, k)
			pastAfter := k > w.after || strings.HasPrefix(w.after, k)
			if !inPrefix || !pastAfter {
				continue
			}
			if more, err := w.walk(filepath.Join(dir, e.name), k); !more || err != nil {
				return more, err
			}
			continue
		}
		if k <= w.after || !strings.HasPrefix(k, w.prefix) {
			continue
		}
		if more, err := w.visit(k, filepath.Join(dir, e.name)); !more || err != nil {
			return more, err
		}
	}
	return true, nil
}

type objectEntry struct {
	Key          string
	LastModified string
	ETag         string
	Size         int64
	StorageClass string
	Owner        *owner `xml:",omitempty"`
}

type prefixEntry struct {
	Prefix string
}

type listResult struct {
	XMLName               xml.Name `xml:"http://s3.amazonaws.com/doc/2006-03-01/ ListBucketResult"`
	Name                  string
	Prefix                string
	Marker                *string `xml:",omitempty"`
	NextMarker            string  `xml:",omitempty"`
	Delimiter             string  `xml:",omitempty"`
	MaxKeys               int
	KeyCount              *int `xml:",omitempty"`
	IsTruncated           bool
	ContinuationToken     string        `xml:",omitempty"`
	NextContinuationToken string        `xml:",omitempty"`
	StartAfter            string        `xml:",omitempty"`
	EncodingType          string        `xml:",omitempty"`
	Contents              []objectEntry `xml:"Contents"`
	CommonPrefixes        []prefixEntry `xml:"CommonPrefixes"`
}

// listObjects serves ListObjectsV2 (v2) and ListObjects.
func (s *Server) listObjects(w http.ResponseWriter, r *http.Request, bucket string, v2 bool) error {
	if err := s.authorize(r, "ListBucket", bucket, ""); err != nil {
		return err
	}
	dir, err := s.bucketDir(bucket)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	res := listResult{Name: bucket, Prefix: q.Get("prefix"), Delimiter: q.Get("delimiter"), MaxKeys: 1000}
	if v := q.Get("max-keys"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return errInvalidArgument("max-keys must be a non-negative integer")
		}
		res.MaxKeys = min(n, 1000)
	}
	after := q.Get("marker")
	if v2 {
		after = q.Get("start-after")
		res.StartAfter = after
		if tok := q.Get("continuation-token"); tok != "" {
			b, err := base64.RawURLEncoding.DecodeString(tok)
			if err != nil {
				return errInvalidArgument("The continuation token provided is incorrect")
			}
			res.ContinuationToken, after = tok, string(b)
		}
	} else {
		res.Marker = &after
	}
	last, err := s.collect(dir, after, &res, q.Get("fetch-owner") == "true" || !v2)
	if err != nil {
		return err
	}
	if res.IsTruncated {
		if v2 {
			res.NextContinuationToken = base64.RawURLEncoding.EncodeToString([]byte(last))
		} else if res.Delimiter != "" {
			res.NextMarker = last
		}
	}
	if v2 {
		n := len(res.Contents) + len(res.CommonPrefixes)
		res.KeyCount = &n
	}
	if q.Get("encoding-type") == "url" {
		urlEncode(&res)
	}
	writeXML(w, res)
	return nil
}

// collect fills res with up to res.MaxKeys keys and common prefixes after
// after, and returns the last one it put in.
func (s *Server) collect(dir, after string, res *listResult, withOwner bool) (string, error) {
	prefix, delim := res.Prefix, res.Delimiter
	// cpOf is the common prefix key rolls up into, "" for none.
	cpOf := func(key string) string {
		if delim == "" || !strings.HasPrefix(key, prefix) {
			return ""
		}
		if i := strings.Index(key[len(prefix):], delim); i >= 0 {
			return key[:len(prefix)+i+len(delim)]
		}
		return ""
	}
	wk := &walker{prefix: prefix, after: after, skip: cpOf(after)}
	count, last := 0, ""
	wk.visit = func(key, path string) (bool, error) {
		if count == res.MaxKeys {
			res.IsTruncated = true
			return false, nil
		}
		if cp := cpOf(key); cp != "" {
			res.CommonPrefixes = append(res.CommonPrefixes, prefixEntry{Prefix: cp})
			wk.skip, last = cp, cp
			count++
			return true, nil
		}
		o, err := openObject(path)
		if errors.Is(err, fs.ErrNotExist) {
			return true, nil // deleted meanwhile
		}
		if err != nil {
			return false, err
		}
		o.f.Close()
		e := objectEntry{Key: key, LastModified: o.modTime.UTC().Format(timeFormat), ETag: o.meta.ETag, Size: o.size, StorageClass: "STANDARD"}
		if withOwner {
			e.Owner = &theOwner
		}
		res.Contents = append(res.Contents, e)
		last = key
		count++
		return true, nil
	}
	_, err := wk.walk(dir, "")
	return last, err
}

// urlEncode escapes the keys and prefixes of res, as encoding-type=url
// asks.
func urlEncode(res *listResult) {
	res.EncodingType = "url"
	res.Prefix, res.Delimiter, res.StartAfter = url.QueryEscape(res.Prefix), url.QueryEscape(res.Delimiter), url.QueryEscape(res.StartAfter)
	if res.Marker != nil {
		m := url.QueryEscape(*res.Marker)
		res.Marker = &m
	}
	res.NextMarker = url.QueryEscape(res.NextMarker)
	for i := range res.Contents {
		res.Contents[i].Key = url.QueryEscape(res.Contents[i].Key)
	}
	for i := range res.CommonPrefixes {
		res.CommonPrefixes[i].Prefix = url.QueryEscape(res.CommonPrefixes[i].Prefix)
	}
}
