package sigv4

import (
	"fmt"
	"net/http"

	"github.com/sharq-dev/sharq/internal/access"
)

// The codes and statuses AWS answers a request it cannot authenticate
// with; the SDKs turn each code into its typed error.
const (
	codeMissing      = "MissingAuthenticationTokenException"
	codeUnrecognized = "UnrecognizedClientException"
	codeInvalid      = "InvalidSignatureException"
	codeIncomplete   = "IncompleteSignatureException"
)

// msgMismatch is AWS's text for a signature that does not match.
const msgMismatch = "The request signature we calculated does not match the signature you provided. " +
	"Check your AWS Secret Access Key and signing method. Consult the service documentation for details."

func missing() error {
	return &access.AuthError{Status: http.StatusForbidden, Code: codeMissing, Message: "Missing Authentication Token"}
}

func unrecognized() error {
	return &access.AuthError{Status: http.StatusForbidden, Code: codeUnrecognized,
		Message: "The security token included in the request is invalid."}
}

func invalidf(format string, args ...any) error {
	return &access.AuthError{Status: http.StatusForbidden, Code: codeInvalid, Message: fmt.Sprintf(format, args...)}
}

func incompletef(format string, args ...any) error {
	return &access.AuthError{Status: http.StatusBadRequest, Code: codeIncomplete, Message: fmt.Sprintf(format, args...)}
}
