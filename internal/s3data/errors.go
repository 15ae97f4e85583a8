package s3data

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"

	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// ErrNoObjects is the cause of a Stage of a prefix that holds no objects.
var ErrNoObjects = errors.New("no objects under the prefix")

// plainError says what went wrong in words a user acts on, and keeps the SDK's
// error beneath it for errors.Is and errors.As.
type plainError struct {
	msg string
	err error
}

func (e *plainError) Error() string { return e.msg }
func (e *plainError) Unwrap() error { return e.err }

// explain turns an SDK or network error into a plain cause: a missing bucket,
// denied access, an unreachable endpoint. bucket names the bucket in the words.
func (s *Store) explain(err error, bucket string) error {
	if err == nil {
		return nil
	}
	var pe *plainError
	if errors.As(err, &pe) || errors.Is(err, ErrNoObjects) {
		return err
	}
	return &plainError{msg: s.cause(err, bucket), err: err}
}

func (s *Store) cause(err error, bucket string) string {
	switch {
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.Is(err, context.DeadlineExceeded):
		return "timed out"
	}
	var api smithy.APIError
	if errors.As(err, &api) {
		switch api.ErrorCode() {
		case "NoSuchBucket":
			return fmt.Sprintf("bucket %s does not exist", bucket)
		case "AccessDenied", "AllAccessDisabled", "Forbidden":
			return "access denied"
		case "InvalidAccessKeyId":
			return "access denied: the server does not know the access key"
		case "SignatureDoesNotMatch":
			return "access denied: the secret key does not match the access key"
		case "ExpiredToken", "InvalidToken":
			return "access denied: the credentials have expired"
		case "NoSuchKey", "NotFound":
			return "object not found"
		case "PreconditionFailed":
			return "an object changed while it was being copied"
		}
	}
	var resp *smithyhttp.ResponseError
	if errors.As(err, &resp) {
		switch resp.HTTPStatusCode() {
		case http.StatusForbidden:
			return "access denied"
		case http.StatusNotFound:
			return "object not found"
		case http.StatusPreconditionFailed:
			return "an object changed while it was being copied"
		}
	}
	if api != nil {
		return fmt.Sprintf("S3 answered %s: %s", api.ErrorCode(), api.ErrorMessage())
	}
	if why := s.networkCause(err); why != "" {
		return why
	}
	msg := err.Error()
	if strings.Contains(msg, "failed to retrieve credentials") || strings.Contains(msg, "failed to refresh cached credentials") {
		return "no AWS credentials found (set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, a profile, or a role)"
	}
	return msg
}

// networkCause names a failure to reach or keep talking to the endpoint. The
// transfer manager flattens some errors to text, so text is checked too.
func (s *Store) networkCause(err error) string {
	reach := "cannot reach the S3 endpoint " + s.endpoint + ": "
	var dns *net.DNSError
	var timeout interface{ Timeout() bool }
	msg := err.Error()
	switch {
	case errors.Is(err, syscall.ECONNREFUSED) || strings.Contains(msg, "connection refused"):
		return reach + "connection refused"
	case errors.As(err, &dns) || strings.Contains(msg, "no such host"):
		return reach + "host not found"
	case errors.Is(err, syscall.EHOSTUNREACH) || errors.Is(err, syscall.ENETUNREACH):
		return reach + "no route to the host"
	case errors.As(err, &timeout) && timeout.Timeout() || strings.Contains(msg, "timeout"):
		return reach + "timed out"
	case errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.ErrUnexpectedEOF) ||
		strings.Contains(msg, "connection reset") || strings.Contains(msg, "unexpected EOF") ||
		strings.Contains(msg, "broken pipe"):
		return "the connection to the S3 endpoint " + s.endpoint + " broke off"
	}
	return ""
}
