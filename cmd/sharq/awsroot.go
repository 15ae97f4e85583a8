package main

import (
	"cmp"
	"errors"
	"net/http"

	"github.com/sharq-dev/sharq/internal/access"
	"github.com/sharq-dev/sharq/internal/access/sigv4"
	"github.com/sharq-dev/sharq/internal/awsjson"
	"github.com/sharq-dev/sharq/internal/iamapi"
	"github.com/sharq-dev/sharq/internal/logsapi"
	"github.com/sharq-dev/sharq/internal/sagemakerapi"
)

// signingServices are the services a request's SigV4 scope may name: the
// AWS Batch API and sharq's own routes sign as batch; the SageMaker, Logs
// and IAM calls of the SageMaker SDK, and S3, as their own services, so that
// AWS_ENDPOINT_URL alone points a client at sharq for all of them.
var signingServices = []string{"batch", "sagemaker", "logs", "iam", "s3"}

// awsRoot serves POST /, where AWS's JSON and query protocols send every
// operation: SageMaker and CloudWatch Logs told apart by X-Amz-Target,
// IAM by its form-encoded Action.
type awsRoot struct {
	sagemaker, logs http.Handler
}

func (a awsRoot) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch serviceOf(r) {
	case "sagemaker":
		a.sagemaker.ServeHTTP(w, r)
	case "logs":
		a.logs.ServeHTTP(w, r)
	case "iam":
		iamapi.Handler.ServeHTTP(w, r)
	default:
		awsjson.WriteError(w, nil, awsjson.UnknownOperation(r.Header.Get("X-Amz-Target")))
	}
}

// serviceOf is the service r's shape says it is for: "" for a POST to /
// that names no operation of a served service. S3's paths are anything
// (/bucket/key): an S3 request is one signed for s3, or addressed to a
// bucket virtual-hosted style.
func serviceOf(r *http.Request) string {
	if isS3Request(r) {
		return "s3"
	}
	if r.URL.Path != "/" || r.Method != http.MethodPost {
		return "batch"
	}
	switch prefix, _ := awsjson.Target(r); {
	case prefix == sagemakerapi.TargetPrefix:
		return "sagemaker"
	case prefix == logsapi.TargetPrefix:
		return "logs"
	case iamapi.IsQuery(r):
		return "iam"
	}
	return ""
}

// scopeChecked refuses a signed request whose credential scope names
// another service than its shape is for, as AWS does (the signature
// itself is checked before, by the authenticator).
func scopeChecked(next http.Handler, fail func(http.ResponseWriter, *http.Request, error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		want := serviceOf(r)
		if got := sigv4.ScopeService(r); got != "" && want != "" && got != want {
			fail(w, r, sigv4.WrongService(want))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// failIn answers an authentication failure in the shape of the service r
// is for: IAM's or S3's XML, else the JSON error of write.
func failIn(write func(http.ResponseWriter, *http.Request, error)) func(http.ResponseWriter, *http.Request, error) {
	return func(w http.ResponseWriter, r *http.Request, err error) {
		switch serviceOf(r) {
		case "s3":
			writeS3AuthError(w, r, err)
			return
		case "iam":
		default:
			write(w, r, err)
			return
		}
		status, code, msg := http.StatusInternalServerError, "ServiceFailure", "internal error"
		if ae, ok := errors.AsType[*access.AuthError](err); ok {
			status, code, msg = cmp.Or(ae.Status, http.StatusForbidden), ae.Code, ae.Message
		}
		iamapi.WriteError(w, status, code, msg)
	}
}
