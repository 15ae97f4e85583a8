package container

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const ecr = "123456789012.dkr.ecr.us-west-2.amazonaws.com"

func TestImageMapRewrite(t *testing.T) {
	m, err := NewImageMap([][2]string{
		{ecr + "/pytorch-training:2.1-gpu", "localhost/pytorch:exact"},
		{"123456789012.dkr.ecr.*.amazonaws.com/pytorch-training:*", "localhost/pytorch:latest"},
		{"*.dkr.ecr.*.amazonaws.com/tensorflow-training:*", "localhost/tf:*"},
		{"*.dkr.ecr.*.amazonaws.com/*", "localhost/ecr/*/*"},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ in, want string }{
		{ecr + "/pytorch-training:2.1-gpu", "localhost/pytorch:exact"},
		{ecr + "/pytorch-training:2.3-cpu-py311", "localhost/pytorch:latest"},
		{"123456789012.dkr.ecr.eu-west-1.amazonaws.com/pytorch-training:x", "localhost/pytorch:latest"},
		{"999.dkr.ecr.us-east-1.amazonaws.com/tensorflow-training:2.14", "localhost/tf:999"},
		{"999.dkr.ecr.us-east-1.amazonaws.com/mine:3", "localhost/ecr/999/us-east-1"},
		{"localhost/pytorch:latest", "localhost/pytorch:latest"},
		{"python:3.12", "python:3.12"},
		{"123456789012.dkr.ecr.us-west-2.amazonaws.com.evil/pytorch-training:1", "123456789012.dkr.ecr.us-west-2.amazonaws.com.evil/pytorch-training:1"},
	} {
		if got := m.Rewrite(tc.in); got != tc.want {
			t.Errorf("Rewrite(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if (ImageMap{}).Rewrite("x") != "x" {
		t.Error("the empty map rewrote a name")
	}
}

func TestLoadImageMap(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	text := write("images.txt", `
# AWS's training images, run as local ones
`+ecr+`/pytorch-training:*   localhost/pytorch:latest
a -> b   # arrows are fine too
`)
	yml := write("images.yaml", `
"`+ecr+`/pytorch-training:*": localhost/pytorch:latest
a: b
`)
	for _, p := range []string{text, yml} {
		m, err := LoadImageMap(p)
		if err != nil {
			t.Fatal(err)
		}
		if m.Len() != 2 || m.Rewrite(ecr+"/pytorch-training:1") != "localhost/pytorch:latest" || m.Rewrite("a") != "b" {
			t.Errorf("%s: got a map of %d that rewrites a to %q", filepath.Base(p), m.Len(), m.Rewrite("a"))
		}
	}
	if m, err := LoadImageMap(""); err != nil || m.Len() != 0 {
		t.Errorf("LoadImageMap(\"\") = %d entries, %v", m.Len(), err)
	}
	for _, tc := range []struct{ name, text, want string }{
		{"bad.txt", "a b c\n", "line 1: want \"from to\""},
		{"dup.txt", "a b\na c\n", `"a" is mapped twice`},
		{"stars.txt", "a:* b:*/*\n", "the replacement has 2 '*', the pattern only 1"},
		{"list.yaml", "- a\n", "want a mapping"},
		{"nested.yml", "a: {b: c}\n", "want \"from: to\""},
	} {
		_, err := LoadImageMap(write(tc.name, tc.text))
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.name) {
			t.Errorf("%s: err = %v, want one naming the file and saying %q", tc.name, err, tc.want)
		}
	}
	if _, err := LoadImageMap(filepath.Join(dir, "missing")); err == nil {
		t.Error("a missing file gave no error")
	}
}
