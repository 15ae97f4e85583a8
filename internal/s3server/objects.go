package s3server

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// An object is one file: its data, then its metadata as JSON, the JSON's
// length (4 bytes, big-endian) and trailerMagic. Data and metadata are so
// renamed into place together, atomically.
const trailerMagic = "SQS3"

// meta is what an object's file holds beside its data.
type meta struct {
	ETag string `json:"etag"`
	// Headers are the headers stored with the object and sent back with
	// it: Content-Type, Content-Encoding, ..., x-amz-meta-*.
	Headers map[string]string `json:"headers,omitempty"`
}

// maxMeta bounds the metadata read back (S3 allows 2 KiB of user
// metadata; the rest is a few headers).
const maxMeta = 64 << 10

// appendMeta writes m after the data in f.
func appendMeta(f *os.File, m meta) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	b = binary.BigEndian.AppendUint32(b, uint32(len(b)))
	b = append(b, trailerMagic...)
	_, err = f.Write(b)
	return err
}

// object is an open object's file.
type object struct {
	f       *os.File
	size    int64 // of its data
	meta    meta
	modTime time.Time
}

// openObject opens the object file at path; fs.ErrNotExist when there is
// none.
func openObject(path string) (*object, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	o, err := readObject(f)
	if err != nil {
		f.Close()
		return nil, err
	}
	return o, nil
}

func readObject(f *os.File) (*object, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fs.ErrNotExist
	}
	var tail [8]byte
	if st.Size() < 8 {
		return nil, fmt.Errorf("object %s: too short", f.Name())
	}
	if _, err := f.ReadAt(tail[:], st.Size()-8); err != nil {
		return nil, err
	}
	n := int64(binary.BigEndian.Uint32(tail[:4]))
	if string(tail[4:]) != trailerMagic || n > maxMeta || n > st.Size()-8 {
		return nil, fmt.Errorf("object %s: no metadata", f.Name())
	}
	b := make([]byte, n)
	if _, err := f.ReadAt(b, st.Size()-8-n); err != nil {
		return nil, err
	}
	o := &object{f: f, size: st.Size() - 8 - n, modTime: st.ModTime()}
	if err := json.Unmarshal(b, &o.meta); err != nil {
		return nil, fmt.Errorf("object %s: %w", f.Name(), err)
	}
	return o, nil
}

// place renames the finished temporary file tmp to path, making the
// directories on the way; a concurrent delete that removes an emptied
// directory between the two is retried.
func place(tmp, path string) error {
	for range 3 {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		err := os.Rename(tmp, path)
		if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return os.Rename(tmp, path)
}

// removeEmptyParents removes the directories from dir up to (not
// including) stop while they are empty.
func removeEmptyParents(dir, stop string) {
	for dir != stop && len(dir) > len(stop) {
		if os.Remove(dir) != nil {
			return
		}
		dir = filepath.Dir(dir)
	}
}
