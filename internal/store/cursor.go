package store

import (
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
)

// Page sizes of ListJobs: JobFilter.Limit 0 or less means DefaultLimit,
// more than MaxLimit means MaxLimit.
const (
	DefaultLimit = 100
	MaxLimit     = 1000
)

// PageLimit applies those bounds to a JobFilter's Limit.
func PageLimit(n int) int {
	switch {
	case n <= 0:
		return DefaultLimit
	case n > MaxLimit:
		return MaxLimit
	}
	return n
}

// EncodeCursor names the last job of a page by its sort key, so the next
// page starts strictly after it even when other jobs share its CreatedAt,
// and jobs committed meanwhile do not shift the pages.
func EncodeCursor(createdAt int64, id string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(createdAt, 10) + ":" + id))
}

// DecodeCursor reads a cursor EncodeCursor made; anything else is an error
// wrapping ErrInvalidCursor.
func DecodeCursor(c string) (createdAt int64, id string, err error) {
	raw, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return 0, "", fmt.Errorf("decode cursor: %w", ErrInvalidCursor)
	}
	ts, id, ok := strings.Cut(string(raw), ":")
	if !ok || id == "" {
		return 0, "", fmt.Errorf("decode cursor: %w", ErrInvalidCursor)
	}
	createdAt, err = strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return 0, "", fmt.Errorf("decode cursor: %w", ErrInvalidCursor)
	}
	return createdAt, id, nil
}

// PrefixEnd returns the smallest string greater than every string with
// prefix p, or false when there is none (p is all 0xff bytes): a name
// prefix is then the byte range [p, PrefixEnd(p)), which an index serves
// and in which "_" and "%" are plain characters.
func PrefixEnd(p string) (string, bool) {
	b := []byte(p)
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] < 0xff {
			b[i]++
			return string(b[:i+1]), true
		}
	}
	return "", false
}
