package container

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"
)

// ImageMap rewrites image names, so that a notebook's AWS image names (an
// ECR repository of AWS's) run as images of this machine. Exact names win;
// then the first pattern that matches, in the file's order. A pattern's '*'
// matches any run of characters; a '*' in its replacement stands for what the
// pattern's '*' of the same rank matched.
type ImageMap struct {
	exact    map[string]string
	patterns []imagePattern
}

type imagePattern struct {
	from, to string
	re       *regexp.Regexp
}

// LoadImageMap reads an image map: YAML (a mapping "from: to", for a file
// named *.yaml or *.yml) or text, one "from to" (or "from -> to") a line,
// with '#' comments and blank lines. An empty path is an empty map.
func LoadImageMap(path string) (ImageMap, error) {
	if path == "" {
		return ImageMap{}, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return ImageMap{}, fmt.Errorf("image map: %w", err)
	}
	var pairs [][2]string
	switch filepath.Ext(path) {
	case ".yaml", ".yml":
		pairs, err = yamlPairs(data)
	default:
		pairs, err = textPairs(data)
	}
	if err != nil {
		return ImageMap{}, fmt.Errorf("image map %s: %w", path, err)
	}
	m, err := NewImageMap(pairs)
	if err != nil {
		return ImageMap{}, fmt.Errorf("image map %s: %w", path, err)
	}
	return m, nil
}

// NewImageMap makes a map from (from, to) pairs, in order.
func NewImageMap(pairs [][2]string) (ImageMap, error) {
	m := ImageMap{exact: map[string]string{}}
	for _, p := range pairs {
		from, to := p[0], p[1]
		if from == "" || to == "" {
			return ImageMap{}, fmt.Errorf("%q -> %q: both names are needed", from, to)
		}
		stars := strings.Count(from, "*")
		if n := strings.Count(to, "*"); n > stars {
			return ImageMap{}, fmt.Errorf("%q -> %q: the replacement has %d '*', the pattern only %d", from, to, n, stars)
		}
		if stars == 0 {
			if _, dup := m.exact[from]; dup {
				return ImageMap{}, fmt.Errorf("%q is mapped twice", from)
			}
			m.exact[from] = to
			continue
		}
		parts := strings.Split(from, "*")
		for i, s := range parts {
			parts[i] = regexp.QuoteMeta(s)
		}
		re := regexp.MustCompile("^" + strings.Join(parts, "(.*?)") + "$")
		m.patterns = append(m.patterns, imagePattern{from: from, to: to, re: re})
	}
	return m, nil
}

// Rewrite returns the image's local name; an image the map does not name
// stays as it is.
func (m ImageMap) Rewrite(image string) string {
	if to, ok := m.exact[image]; ok {
		return to
	}
	for _, p := range m.patterns {
		sub := p.re.FindStringSubmatch(image)
		if sub == nil {
			continue
		}
		var b strings.Builder
		k := 1
		for i, s := range strings.Split(p.to, "*") {
			if i > 0 {
				b.WriteString(sub[k])
				k++
			}
			b.WriteString(s)
		}
		return b.String()
	}
	return image
}

// Len is the number of entries.
func (m ImageMap) Len() int { return len(m.exact) + len(m.patterns) }

func textPairs(data []byte) ([][2]string, error) {
	var pairs [][2]string
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line, _, _ := strings.Cut(sc.Text(), "#")
		f := strings.Fields(line)
		if len(f) == 3 && f[1] == "->" {
			f = []string{f[0], f[2]}
		}
		switch len(f) {
		case 0:
			continue
		case 2:
			pairs = append(pairs, [2]string{f[0], f[1]})
		default:
			return nil, fmt.Errorf("line %d: want \"from to\", got %q", n, strings.TrimSpace(line))
		}
	}
	return pairs, sc.Err()
}

// yamlPairs reads a mapping and keeps its order, which decides between
// patterns.
func yamlPairs(data []byte) ([][2]string, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	if len(doc.Content) == 0 {
		return nil, nil
	}
	top := doc.Content[0]
	if top.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("line %d: want a mapping of image names to image names", top.Line)
	}
	var pairs [][2]string
	for i := 0; i+1 < len(top.Content); i += 2 {
		k, v := top.Content[i], top.Content[i+1]
		if k.Kind != yaml.ScalarNode || v.Kind != yaml.ScalarNode {
			return nil, fmt.Errorf("line %d: want \"from: to\" with two image names", k.Line)
		}
		pairs = append(pairs, [2]string{k.Value, v.Value})
	}
	return pairs, nil
}
