package trainingjob

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// A shape is what a CreateTrainingJob request may hold at one place:
// schema_gen.go has the request's, generated from the AWS SDK for Go.
type shape struct {
	kind    shapeKind
	members []member // objectShape: its members, by name
	elem    *shape   // listShape, mapShape: each item or value; nil for scalars
}

type shapeKind uint8

const (
	objectShape shapeKind = iota + 1
	listShape             // a list of objects (or of lists or maps of them)
	mapShape              // the user's names, each to an elem
)

// A member is a name an object defines; a nil shape is a scalar (a
// string, number, boolean, timestamp, or a list or map of those).
type member struct {
	name  string
	shape *shape
}

// member finds name among s's members, which are sorted.
func (s *shape) member(name []byte) (member, bool) {
	lo, hi := 0, len(s.members)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if s.members[mid].name < string(name) {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo < len(s.members) && s.members[lo].name == string(name) {
		return s.members[lo], true
	}
	return member{}, false
}

// CheckSubmission refuses, with an *Error, a parsed request that
// CreateTrainingJob or sharq would refuse for what Parse lets through: a
// member that CreateTrainingJob does not define, at any depth (names are
// case-sensitive, as AWS reads them; the names in maps such as
// HyperParameters and Environment are the user's), and Pipe input mode,
// which sharq does not support. A request not made by Parse passes.
func (r *Request) CheckSubmission() error {
	if r.raw == nil {
		return nil
	}
	w := walker{b: r.raw}
	w.space()
	if w.value(createTrainingJobInput) {
		return nil
	}
	path := w.pathString()
	switch {
	case w.unknown:
		msg := fmt.Sprintf("unknown field %q (CreateTrainingJob has no such field", path)
		if near := nearest(w.name, w.siblings); near != "" {
			msg += fmt.Sprintf("; did you mean %q?", near)
		}
		return refusef("%s)", msg)
	case w.pipe:
		return refusef("%s is Pipe, which sharq does not support; use File or FastFile", path)
	}
	return &Error{Malformed: true, Reason: "not valid JSON"}
}

// walker reads a document Parse accepted, following a shape. It does not
// check the JSON again: it only never runs past the end or fails to
// advance, so reading anything else ends with false. On a refusal, each
// level it returns through adds its step to the path, which costs
// nothing while all is well.
type walker struct {
	b []byte
	i int

	unknown  bool     // a member is not defined where it is:
	name     string   // its name,
	siblings []member // and the members defined there
	pipe     bool     // an input mode is Pipe
	path     []step   // where, innermost first
}

// step is a member name (index -1), or an index in a list.
type step struct {
	name  string
	index int
}

func (w *walker) refused() bool { return w.unknown || w.pipe }

func (w *walker) value(s *shape) bool {
	if s == nil || w.i >= len(w.b) {
		return w.skip()
	}
	switch c := w.b[w.i]; {
	case s.kind == objectShape && c == '{':
		return w.object(s)
	case s.kind == listShape && c == '[':
		return w.list(s.elem)
	case s.kind == mapShape && c == '{' && s.elem != nil:
		return w.mapValues(s.elem)
	}
	// null, a map of scalars, or a value of another type than the shape's:
	// the last is not ours to refuse.
	return w.skip()
}

func (w *walker) object(s *shape) bool {
	if w.open('}') {
		return true
	}
	for {
		name, ok := w.str()
		if !ok || !w.colon() {
			return false
		}
		m, ok := s.member(name)
		if !ok {
			w.unknown, w.name, w.siblings = true, string(name), s.members
			w.path = append(w.path, step{name: w.name, index: -1})
			return false
		}
		if m.shape == nil && isInputMode(s, m.name) {
			ok = w.inputMode()
		} else {
			ok = w.value(m.shape)
		}
		if !ok && w.refused() {
			w.path = append(w.path, step{name: m.name, index: -1})
		}
		if more, next := w.next('}'); !ok || !next || !more {
			return ok && next
		}
	}
}

func (w *walker) list(elem *shape) bool {
	if w.open(']') {
		return true
	}
	for n := 0; ; n++ {
		ok := w.value(elem)
		if !ok && w.refused() {
			w.path = append(w.path, step{index: n})
		}
		if more, next := w.next(']'); !ok || !next || !more {
			return ok && next
		}
	}
}

func (w *walker) mapValues(elem *shape) bool {
	if w.open('}') {
		return true
	}
	for {
		name, ok := w.str()
		if !ok || !w.colon() {
			return false
		}
		ok = w.value(elem)
		if !ok && w.refused() {
			w.path = append(w.path, step{name: string(name), index: -1})
		}
		if more, next := w.next('}'); !ok || !next || !more {
			return ok && next
		}
	}
}

// isInputMode tells whether member name of s says how a channel's data
// is given to the job.
func isInputMode(s *shape, name string) bool {
	return s == shapeChannel && name == "InputMode" || s == shapeAlgorithmSpecification && name == "TrainingInputMode"
}

func (w *walker) inputMode() bool {
	if w.i >= len(w.b) || w.b[w.i] != '"' {
		return w.skip()
	}
	mode, ok := w.str()
	w.pipe = ok && string(mode) == "Pipe"
	return ok && !w.pipe
}

// open reads the bracket that opens an object or list, and its closing
// bracket when it is empty.
func (w *walker) open(close byte) (empty bool) {
	w.i++
	w.space()
	if w.i < len(w.b) && w.b[w.i] == close {
		w.i++
		return true
	}
	return false
}

// next reads what follows an item: a comma (more) or the closing bracket.
func (w *walker) next(close byte) (more, ok bool) {
	w.space()
	if w.i >= len(w.b) {
		return false, false
	}
	switch w.b[w.i] {
	case ',':
		w.i++
		w.space()
		return true, true
	case close:
		w.i++
		return false, true
	}
	return false, false
}

func (w *walker) colon() bool {
	w.space()
	if w.i >= len(w.b) || w.b[w.i] != ':' {
		return false
	}
	w.i++
	w.space()
	return true
}

func (w *walker) space() {
	for w.i < len(w.b) && (w.b[w.i] == ' ' || w.b[w.i] == '\t' || w.b[w.i] == '\n' || w.b[w.i] == '\r') {
		w.i++
	}
}

// str reads a string: its bytes in the document when it has no escapes.
func (w *walker) str() ([]byte, bool) {
	start := w.i
	escaped, ok := w.skipString()
	switch {
	case !ok:
		return nil, false
	case !escaped:
		return w.b[start+1 : w.i-1], true
	}
	var s string
	if json.Unmarshal(w.b[start:w.i], &s) != nil {
		return nil, false
	}
	return []byte(s), true
}

// skipString reads past a string, telling whether it holds escapes.
func (w *walker) skipString() (escaped, ok bool) {
	if w.i >= len(w.b) || w.b[w.i] != '"' {
		return false, false
	}
	w.i++
	for {
		n := bytes.IndexByte(w.b[w.i:], '"')
		if n < 0 {
			return false, false
		}
		end := w.i + n
		// The quote ends the string unless an odd number of
		// backslashes precede it.
		slashes := 0
		for j := end - 1; j >= w.i && w.b[j] == '\\'; j-- {
			slashes++
		}
		escaped = escaped || bytes.IndexByte(w.b[w.i:end], '\\') >= 0
		w.i = end + 1
		if slashes%2 == 0 {
			return escaped, true
		}
	}
}

// skip reads past one value of any kind.
func (w *walker) skip() bool {
	depth, start := 0, w.i
	for w.i < len(w.b) {
		switch w.b[w.i] {
		case '"':
			if _, ok := w.skipString(); !ok {
				return false
			}
			if depth == 0 {
				return true
			}
			continue
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return w.i > start
			}
			depth--
			if depth == 0 {
				w.i++
				return true
			}
		case ',', ' ', '\t', '\n', '\r':
			if depth == 0 {
				return w.i > start
			}
		}
		w.i++
	}
	return depth == 0 && w.i > start
}

// pathString writes the path of a refusal, outermost first.
func (w *walker) pathString() string {
	var sb strings.Builder
	for i := len(w.path) - 1; i >= 0; i-- {
		switch s := w.path[i]; {
		case s.index >= 0:
			sb.WriteString("[" + strconv.Itoa(s.index) + "]")
		case i < len(w.path)-1:
			sb.WriteString("." + s.name)
		default:
			sb.WriteString(s.name)
		}
	}
	return sb.String()
}

// nearest is the member whose name is closest to name, ignoring case, if
// it is close enough to be what was meant, or else the only one that name
// begins (MaxRuntime for MaxRuntimeInSeconds); "" if none is.
func nearest(name string, members []member) string {
	lower := strings.ToLower(name)
	best, bestDist := "", max(1, len(name)/3)
	for _, m := range members {
		if d := editDistance(lower, strings.ToLower(m.name)); d <= bestDist && (best == "" || d < bestDist) {
			best, bestDist = m.name, d
		}
	}
	if best != "" || len(name) < 3 {
		return best
	}
	for _, m := range members {
		if strings.HasPrefix(strings.ToLower(m.name), lower) {
			if best != "" {
				return ""
			}
			best = m.name
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
