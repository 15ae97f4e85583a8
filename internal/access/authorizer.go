package access

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// PolicyAuthorizer authorizes a key's requests by the access policies it
// was given. It reads the key and its policies from the store at each
// request, so a change made by `sharq admin keys` or `sharq apply` holds
// at once.
//
// On top of the policies: a key may update or terminate a job only if it
// may also submit (batch:SubmitServiceJob) to the job's quota share (its
// queue, for a job of no share), so a team's key that submits only to its
// own share cannot touch another team's jobs even under "Resource": "*".
type PolicyAuthorizer struct {
	Keys KeyStore
	// JobShare returns the ARN a job was submitted to (its quota share's,
	// else its queue's), or an error wrapping ErrNotFound.
	JobShare func(ctx context.Context, jobARN string) (string, error)
	// AnonymousRead lets callers who signed nothing do what the built-in
	// ReadOnlyAccess policy allows; otherwise they are refused as
	// unauthenticated.
	AnonymousRead bool
}

var _ Authorizer = (*PolicyAuthorizer)(nil)

func (a *PolicyAuthorizer) Authorize(ctx context.Context, id Identity, action, resource string) error {
	// Anonymous reading is the console's and the API's: S3's objects are
	// the teams' data, and stay behind a key.
	if id.Anonymous && a.AnonymousRead && !strings.HasPrefix(action, "s3:") &&
		decide([]PolicyDocument{builtinPolicies["ReadOnlyAccess"]}, action, resource) == allowed {
		return nil
	}
	if id.Anonymous {
		return &AuthError{Status: http.StatusForbidden, Code: "MissingAuthenticationTokenException", Message: "Missing Authentication Token"}
	}
	docs, err := a.policies(ctx, id)
	if err != nil {
		return err
	}
	switch decide(docs, action, resource) {
	case explicitDeny:
		return &DeniedError{Principal: id.Principal, Action: action, Resource: resource,
			Reason: "an explicit deny in an identity-based policy"}
	case implicitDeny:
		return &DeniedError{Principal: id.Principal, Action: action, Resource: resource,
			Reason: "no identity-based policy allows the " + action + " action"}
	}
	if action != "batch:UpdateServiceJob" && action != "batch:TerminateServiceJob" {
		return nil
	}
	share, err := a.JobShare(ctx, resource)
	if errors.Is(err, ErrNotFound) {
		return nil // the operation answers that the job does not exist
	}
	if err != nil {
		return fmt.Errorf("authorize %s: %w", action, err)
	}
	if decide(docs, "batch:SubmitServiceJob", share) != allowed {
		return &DeniedError{Principal: id.Principal, Action: action, Resource: resource,
			Reason: "the job is in " + share + ", where no identity-based policy allows the batch:SubmitServiceJob action"}
	}
	return nil
}

// policies returns the documents of the policies id's key has.
func (a *PolicyAuthorizer) policies(ctx context.Context, id Identity) ([]PolicyDocument, error) {
	key, err := a.Keys.Key(ctx, id.AccessKeyID)
	if errors.Is(err, ErrNotFound) {
		return nil, nil // deleted since it signed: nothing is allowed
	}
	if err != nil {
		return nil, fmt.Errorf("authorize: %w", err)
	}
	var docs []PolicyDocument
	for _, name := range key.Policies {
		if d, ok := builtinPolicies[name]; ok {
			docs = append(docs, d)
			continue
		}
		p, err := a.Keys.Policy(ctx, name)
		if errors.Is(err, ErrNotFound) {
			continue // a policy not (yet) applied allows nothing
		}
		if err != nil {
			return nil, fmt.Errorf("authorize: %w", err)
		}
		d, err := ParsePolicy(p.Document)
		if err != nil {
			return nil, fmt.Errorf("authorize: policy %s: %w", name, err)
		}
		docs = append(docs, d)
	}
	return docs, nil
}

// JobID returns the job ID at the end of a service-job ARN.
func JobID(jobARN string) string {
	_, id, _ := strings.Cut(jobARN, ":service-job/")
	return id
}
