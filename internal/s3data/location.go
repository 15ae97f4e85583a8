package s3data

import (
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
)

// location is a parsed data URI: an S3 bucket and key (prefix), or a local path.
type location struct {
	bucket string // "" for a local path
	key    string
	path   string // local paths only
}

func (l location) local() bool { return l.bucket == "" }

// parseURI accepts s3://bucket/key, file:///dir and absolute paths.
func parseURI(uri string) (location, error) {
	switch {
	case strings.HasPrefix(uri, "s3://"):
		rest := strings.TrimPrefix(uri, "s3://")
		bucket, key, _ := strings.Cut(rest, "/")
		if bucket == "" {
			return location{}, errors.New("the URI names no bucket")
		}
		return location{bucket: bucket, key: key}, nil
	case strings.HasPrefix(uri, "file://"):
		u, err := url.Parse(uri)
		if err != nil {
			return location{}, fmt.Errorf("not a file URI: %w", err)
		}
		if u.Host != "" && u.Host != "localhost" {
			return location{}, fmt.Errorf("file URI names host %q; only local paths (file:///dir) are supported", u.Host)
		}
		if !filepath.IsAbs(u.Path) {
			return location{}, errors.New("file URI path is not absolute")
		}
		return location{path: filepath.Clean(u.Path)}, nil
	case filepath.IsAbs(uri):
		return location{path: filepath.Clean(uri)}, nil
	}
	return location{}, errors.New("not an s3:// or file:// URI or an absolute path")
}

// dirPrefix returns key as a "directory" prefix: "" or ending in "/".
func dirPrefix(key string) string {
	if key == "" || strings.HasSuffix(key, "/") {
		return key
	}
	return key + "/"
}

// relPath turns the part of a key below a prefix into a local relative path,
// refusing anything that would land outside the destination.
func relPath(rel string) (string, error) {
	rel = strings.TrimLeft(rel, "/")
	p := filepath.FromSlash(rel)
	if rel == "" || !filepath.IsLocal(p) {
		return "", fmt.Errorf("key part %q does not name a file below the destination", rel)
	}
	return p, nil
}
