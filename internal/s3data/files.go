package s3data

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// copyFile copies the file src to dst. Go copies *os.File to *os.File with
// copy_file_range, so the data does not pass through this process and file
// systems that can clone extents do.
func copyFile(src, dst string, perm fs.FileMode) error {
	f, err := os.Open(src)
	if err != nil {
		return err
	}
	defer f.Close()
	return copyFrom(f, dst, perm)
}

func copyFrom(src *os.File, dst string, perm fs.FileMode) error {
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, src); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func writeEmpty(dst string) error {
	f, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	return f.Close()
}

// localFiles lists the regular files below dir by slash-separated relative
// path. A missing dir has none. Links are not followed, as the transfer
// manager's directory upload does not follow them.
func localFiles(dir string) (map[string]string, error) {
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == dir && errors.Is(err, fs.ErrNotExist) {
				return fs.SkipAll
			}
			return err
		}
		if d.Type().IsRegular() {
			rel, _ := filepath.Rel(dir, p)
			files[filepath.ToSlash(rel)] = p
		}
		return nil
	})
	return files, err
}

// mirrorLocal makes dst hold exactly the regular files of src.
func mirrorLocal(src, dst string) error {
	want, err := localFiles(src)
	if err != nil {
		return err
	}
	have, err := localFiles(dst)
	if err != nil {
		return err
	}
	for rel := range have {
		if _, ok := want[rel]; !ok {
			if err := os.Remove(filepath.Join(dst, filepath.FromSlash(rel))); err != nil {
				return err
			}
		}
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	for rel, p := range want {
		target := filepath.Join(dst, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		if err := copyFile(p, target, 0o644); err != nil {
			return err
		}
	}
	return nil
}
