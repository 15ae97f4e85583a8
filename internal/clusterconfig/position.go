package clusterconfig

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// The YAML library reports a syntax error at the line where the enclosing
// construct began, not where the problem is, and no column; a type error
// or a FieldError has no column either. These find the place.

// yamlLine splits "yaml: line 4: did not find ..." into 4 and the problem.
var yamlLine = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)

// maxSearch bounds the document size for which a syntax error's place is
// searched, which parses the document's prefixes.
const maxSearch = 256 << 10

// syntaxError rewrites a syntax error of data with the line and column of
// its problem: where the shortest prefix of data that fails the same way
// ends.
func syntaxError(data []byte, err error) error {
	m := yamlLine.FindStringSubmatch(err.Error())
	if m == nil || len(data) > maxSearch {
		return err
	}
	problem := m[2]
	fails := func(prefix string) bool {
		var n yaml.Node
		e := yaml.Unmarshal([]byte(prefix), &n)
		if e == nil {
			return false
		}
		pm := yamlLine.FindStringSubmatch(e.Error())
		return pm != nil && pm[2] == problem
	}
	lines := strings.SplitAfter(string(data), "\n")
	done := ""
	for i, l := range lines {
		if !fails(done + l) {
			done += l
			continue
		}
		for c := 1; c <= len(l); c++ {
			if fails(done + l[:c]) {
				// It fails at a token's last character (a key's colon):
				// point at the token.
				for c > 1 && !strings.ContainsRune(" \t[{,:", rune(l[c-2])) {
					c--
				}
				return fmt.Errorf("line %d, column %d: %s", i+1, utf8Col(l, c), problem)
			}
		}
		return fmt.Errorf("line %d: %s", i+1, problem)
	}
	return err
}

// utf8Col is the column (1-based, in characters) of byte c of a line.
func utf8Col(line string, c int) int { return len([]rune(line[:c-1])) + 1 }

// typeError adds the column to each message of a type error: that of the
// node on its line that it names (a key not known, a value not fitting).
func typeError(root *yaml.Node, err error) error {
	te, ok := errors.AsType[*yaml.TypeError](err)
	if !ok {
		return err
	}
	msgs := make([]string, len(te.Errors))
	for i, msg := range te.Errors {
		msgs[i] = msg
		m := yamlLine.FindStringSubmatch(msg)
		if m == nil {
			continue
		}
		line, _ := strconv.Atoi(m[1])
		if n := nodeOnLine(root, line, m[2]); n != nil {
			msgs[i] = fmt.Sprintf("line %d, column %d: %s", line, n.Column, m[2])
		}
	}
	return errors.New(strings.Join(msgs, "; "))
}

// nodeOnLine finds the node of the line that msg quotes, else the first
// one on the line.
func nodeOnLine(n *yaml.Node, line int, msg string) *yaml.Node {
	var first *yaml.Node
	var found *yaml.Node
	var walk func(*yaml.Node)
	walk = func(n *yaml.Node) {
		if found != nil {
			return
		}
		if n.Line == line && n.Kind == yaml.ScalarNode {
			if first == nil {
				first = n
			}
			if strings.Contains(msg, "field "+n.Value+" ") || strings.Contains(msg, "`"+n.Value+"`") {
				found = n
				return
			}
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(n)
	if found != nil {
		return found
	}
	return first
}

// fieldPart is one step of a FieldError's path: "quotaShares[2]".
var fieldPart = regexp.MustCompile(`^([A-Za-z]+)(?:\[(\d+)\])?$`)

// locate sets a FieldError's line and column: those of the field's value,
// or, for a field that is missing, of the nearest enclosing one there is.
func locate(root *yaml.Node, fe *FieldError) {
	n := root
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	at := n
	for _, part := range strings.Split(fe.Field, ".") {
		m := fieldPart.FindStringSubmatch(part)
		if m == nil || n == nil || n.Kind != yaml.MappingNode {
			break
		}
		n = mapValue(n, m[1])
		if n != nil && m[2] != "" {
			i, _ := strconv.Atoi(m[2])
			if n.Kind != yaml.SequenceNode || i >= len(n.Content) {
				break
			}
			n = n.Content[i]
		}
		if n == nil {
			break
		}
		at = n
	}
	fe.Line, fe.Column = at.Line, at.Column
}

func mapValue(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}
