package awsjson_test

import (
	"errors"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sharq-dev/sharq/internal/access"
	"github.com/sharq-dev/sharq/internal/awsjson"
)

// Ensure each kind of error is answered in AWS's shape, with its code in
// the body and in X-Amzn-ErrorType, and nothing internal shown.
func TestWriteError(t *testing.T) {
	alice := access.Identity{Principal: "arn:aws:iam::000000000000:user/alice"}
	for name, tc := range map[string]struct {
		err    error
		status int
		body   string
	}{
		"Validation": {awsjson.Validation("bad %s", "x"), 400, `{"__type":"ValidationException","message":"bad x"}`},
		"Denied": {access.Deny(alice, "sagemaker:StopTrainingJob", "arn:tj"), 403,
			`{"__type":"AccessDeniedException","message":"User: arn:aws:iam::000000000000:user/alice is not authorized to perform: sagemaker:StopTrainingJob on resource: arn:tj"}`},
		"Unauthenticated": {&access.AuthError{Code: "MissingAuthenticationTokenException", Message: "Missing Authentication Token"}, 403,
			`{"__type":"MissingAuthenticationTokenException","message":"Missing Authentication Token"}`},
		"Internal": {errors.New("disk on fire"), 500, `{"__type":"InternalFailure","message":"internal error"}`},
	} {
		t.Run(name, func(t *testing.T) {
			w := httptest.NewRecorder()
			awsjson.WriteError(w, nil, tc.err)
			if w.Code != tc.status || w.Body.String() != tc.body || !strings.Contains(tc.body, `"`+w.Header().Get("X-Amzn-ErrorType")+`"`) ||
				w.Header().Get("Content-Type") != awsjson.ContentType {
				t.Errorf("%d %s %v, want %d %s", w.Code, w.Body, w.Header(), tc.status, tc.body)
			}
		})
	}
}

// Ensure a request's target splits into service and operation, and an
// empty body decodes as {}.
func TestTargetAndDecode(t *testing.T) {
	r := httptest.NewRequest("POST", "/", strings.NewReader(""))
	r.Header.Set("X-Amz-Target", "SageMaker.DescribeTrainingJob")
	if p, op := awsjson.Target(r); p != "SageMaker" || op != "DescribeTrainingJob" {
		t.Errorf("Target: %q %q", p, op)
	}
	var v struct{ A string }
	if err := awsjson.Decode(r, &v, "ValidationException"); err != nil {
		t.Errorf("empty body: %v", err)
	}
	r = httptest.NewRequest("POST", "/", strings.NewReader("{"))
	var e *awsjson.Error
	if err := awsjson.Decode(r, &v, "InvalidParameterException"); !errors.As(err, &e) || e.Code != "InvalidParameterException" || e.Status != 400 {
		t.Errorf("malformed body: %v", err)
	}
}
