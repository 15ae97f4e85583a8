package s3server

import (
	"encoding/xml"
	"fmt"
	"net/http"
)

// Error is an S3 error answer: its HTTP status and AWS's code.
type Error struct {
	Status  int
	Code    string
	Message string
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

func errorf(status int, code, format string, args ...any) *Error {
	return &Error{Status: status, Code: code, Message: fmt.Sprintf(format, args...)}
}

var (
	errNoSuchBucket    = errorf(http.StatusNotFound, "NoSuchBucket", "The specified bucket does not exist")
	errNoSuchKey       = errorf(http.StatusNotFound, "NoSuchKey", "The specified key does not exist.")
	errNoSuchUpload    = errorf(http.StatusNotFound, "NoSuchUpload", "The specified upload does not exist. The upload ID may be invalid, or the upload may have been aborted or completed.")
	errBucketNotEmpty  = errorf(http.StatusConflict, "BucketNotEmpty", "The bucket you tried to delete is not empty")
	errOwnedByYou      = errorf(http.StatusConflict, "BucketAlreadyOwnedByYou", "Your previous request to create the named bucket succeeded and you already own it.")
	errInvalidBucket   = errorf(http.StatusBadRequest, "InvalidBucketName", "The specified bucket is not valid.")
	errKeyTooLong      = errorf(http.StatusBadRequest, "KeyTooLongError", "Your key is too long")
	errIncompleteBody  = errorf(http.StatusBadRequest, "IncompleteBody", "You did not provide the number of bytes specified by the Content-Length HTTP header.")
	errBadDigest       = errorf(http.StatusBadRequest, "BadDigest", "The Content-MD5 or checksum value that you specified did not match what the server received.")
	errInvalidDigest   = errorf(http.StatusBadRequest, "InvalidDigest", "The Content-MD5 or checksum value that you specified is not valid.")
	errMalformedXML    = errorf(http.StatusBadRequest, "MalformedXML", "The XML you provided was not well-formed or did not validate against our published schema.")
	errInvalidPart     = errorf(http.StatusBadRequest, "InvalidPart", "One or more of the specified parts could not be found. The part might not have been uploaded, or the specified entity tag might not have matched the part's entity tag.")
	errInvalidPartOrd  = errorf(http.StatusBadRequest, "InvalidPartOrder", "The list of parts was not in ascending order. Parts must be ordered by part number.")
	errEntityTooSmall  = errorf(http.StatusBadRequest, "EntityTooSmall", "Your proposed upload is smaller than the minimum allowed object size.")
	errEntityTooLarge  = errorf(http.StatusBadRequest, "EntityTooLarge", "Your proposed upload exceeds the maximum allowed object size.")
	errMethodNotAllow  = errorf(http.StatusMethodNotAllowed, "MethodNotAllowed", "The specified method is not allowed against this resource.")
	errSignature       = errorf(http.StatusForbidden, "SignatureDoesNotMatch", "The request signature we calculated does not match the signature you provided. Check your key and signing method.")
	errMissingLength   = errorf(http.StatusLengthRequired, "MissingContentLength", "You must provide the Content-Length HTTP header.")
	errInvalidArgument = func(msg string) *Error { return errorf(http.StatusBadRequest, "InvalidArgument", "%s", msg) }
)

type errorBody struct {
	XMLName   xml.Name `xml:"Error"`
	Code      string
	Message   string
	Resource  string `xml:",omitempty"`
	RequestID string `xml:"RequestId"`
}

// WriteError answers r with an S3 error in S3's XML shape (no body for a
// HEAD, as S3).
func WriteError(w http.ResponseWriter, r *http.Request, status int, code, message string) {
	id := w.Header().Get("X-Amz-Request-Id")
	if id == "" {
		id = newID()
		w.Header().Set("X-Amz-Request-Id", id)
	}
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(status)
	if r.Method == http.MethodHead {
		return
	}
	writeXML(w, errorBody{Code: code, Message: message, Resource: r.URL.Path, RequestID: id})
}

func writeXML(w http.ResponseWriter, v any) {
	w.Write([]byte(xml.Header))
	xml.NewEncoder(w).Encode(v)
}
