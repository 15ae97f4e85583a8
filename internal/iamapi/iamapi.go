// Package iamapi answers the IAM calls the SageMaker Python SDK makes to
// check a role (SimulatePrincipalPolicy, GetRole): sharq keeps no IAM
// roles, so every IAM operation is refused with AccessDenied, in IAM's
// awsQuery XML error shape, which the SDK takes as "cannot tell" and goes
// on. It sits on the shell side.
package iamapi

import (
	"encoding/xml"
	"net/http"
	"strings"

	"github.com/google/uuid"

	"github.com/sharq-dev/sharq/internal/access"
)

// IsQuery tells whether r is an awsQuery request (a form-encoded POST with
// an Action), the protocol IAM speaks.
func IsQuery(r *http.Request) bool {
	return r.Method == http.MethodPost &&
		strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded") &&
		r.Header.Get("X-Amz-Target") == ""
}

// errorResponse is IAM's error document.
type errorResponse struct {
	XMLName xml.Name `xml:"https://iam.amazonaws.com/doc/2010-05-08/ ErrorResponse"`
	Error   struct {
		Type    string `xml:"Type"`
		Code    string `xml:"Code"`
		Message string `xml:"Message"`
	} `xml:"Error"`
	RequestID string `xml:"RequestId"`
}

// Handler refuses every IAM operation.
var Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	action := "iam:" + r.PostFormValue("Action")
	resource := access.AnyResource
	if role := r.PostFormValue("RoleName"); role != "" {
		resource = "role/" + role
	}
	if p := r.PostFormValue("PolicySourceArn"); p != "" {
		resource = p
	}
	msg := access.Deny(access.Caller(r.Context()), action, resource).Error() + " because sharq serves no IAM"
	WriteError(w, http.StatusForbidden, "AccessDenied", msg)
})

// WriteError answers an error in IAM's shape.
func WriteError(w http.ResponseWriter, status int, code, msg string) {
	var e errorResponse
	e.Error.Type, e.Error.Code, e.Error.Message = "Sender", code, msg
	e.RequestID = uuid.NewString()
	b, _ := xml.Marshal(e)
	w.Header().Set("Content-Type", "text/xml")
	w.Header()["x-amzn-RequestId"] = []string{e.RequestID}
	w.WriteHeader(status)
	w.Write(append([]byte(xml.Header), b...))
}
