package s3data

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"golang.org/x/sync/errgroup"
)

// maxManifestBytes bounds what is read of a manifest; AWS lists objects one
// per line in it, so this is millions of entries.
const maxManifestBytes = 256 << 20

// resolveManifest reads a manifest and looks up each object it lists, in the
// manifest's order.
func (s *Store) resolveManifest(ctx context.Context, loc location) ([]object, error) {
	raw, err := s.readManifest(ctx, loc)
	if err != nil {
		return nil, err
	}
	prefix, rels, err := parseManifest(raw)
	if err != nil {
		return nil, err
	}
	if len(rels) == 0 {
		return nil, errors.New("the manifest lists no objects")
	}
	base, err := parseURI(prefix)
	if err != nil {
		return nil, fmt.Errorf("manifest prefix %s: %w", prefix, err)
	}
	objs := make([]object, len(rels))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(s.cfg.Concurrency)
	for i, rel := range rels {
		p, err := relPath(rel)
		if err != nil {
			return nil, fmt.Errorf("manifest entry %q: %w", rel, err)
		}
		g.Go(func() error {
			o, err := s.stat(gctx, base, rel)
			if err != nil {
				return fmt.Errorf("manifest entry %q: %w", rel, err)
			}
			o.rel = p
			objs[i] = o
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return objs, checkDistinct(objs)
}

func (s *Store) readManifest(ctx context.Context, loc location) ([]byte, error) {
	if loc.local() {
		raw, err := os.ReadFile(loc.path)
		if err != nil {
			return nil, localCause(err)
		}
		return raw, nil
	}
	out, err := s.s3.GetObject(ctx, &s3.GetObjectInput{Bucket: &loc.bucket, Key: &loc.key})
	if err != nil {
		return nil, s.explain(err, loc.bucket)
	}
	defer out.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(out.Body, maxManifestBytes+1))
	if err != nil {
		return nil, s.explain(err, loc.bucket)
	}
	if len(raw) > maxManifestBytes {
		return nil, fmt.Errorf("the manifest is larger than %d bytes", maxManifestBytes)
	}
	return raw, nil
}

// parseManifest reads [{"prefix":"s3://b/p/"}, "rel1", "rel2", ...].
func parseManifest(raw []byte) (prefix string, rels []string, err error) {
	var entries []json.RawMessage
	if err := json.Unmarshal(raw, &entries); err != nil {
		return "", nil, fmt.Errorf("the manifest is not a JSON array: %w", err)
	}
	if len(entries) == 0 {
		return "", nil, errors.New(`the manifest is empty; it must start with {"prefix": "s3://bucket/prefix/"}`)
	}
	var head struct {
		Prefix string `json:"prefix"`
	}
	if err := json.Unmarshal(entries[0], &head); err != nil || head.Prefix == "" {
		return "", nil, errors.New(`the manifest's first entry must be {"prefix": "s3://bucket/prefix/"}`)
	}
	rels = make([]string, 0, len(entries)-1)
	for i, e := range entries[1:] {
		var rel string
		if err := json.Unmarshal(e, &rel); err != nil {
			return "", nil, fmt.Errorf("manifest entry %d is not a string", i+1)
		}
		rels = append(rels, rel)
	}
	return head.Prefix, rels, nil
}

// stat looks up the object at prefix+rel.
func (s *Store) stat(ctx context.Context, base location, rel string) (object, error) {
	if base.local() {
		p := filepath.Join(base.path, filepath.FromSlash(rel))
		info, err := os.Stat(p)
		if err != nil {
			return object{}, localCause(err)
		}
		return object{key: rel, path: p, size: info.Size()}, nil
	}
	key := base.key + rel
	out, err := s.s3.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &base.bucket, Key: &key})
	if err != nil {
		return object{}, s.explain(err, base.bucket)
	}
	return object{bucket: base.bucket, key: key, size: aws.ToInt64(out.ContentLength), etag: aws.ToString(out.ETag)}, nil
}
