// Package access is the request path every route of sharq serve shares:
// who the caller is (authentication) and whether the caller may perform an
// operation on a resource (authorization).
//
//  1. Middleware runs the Authenticator once for every request, before any
//     route sees it, and puts the caller's Identity in the request's
//     context; a request that fails authentication goes no further.
//  2. Each operation (an AWS Batch operation, a sharq route, a console
//     read or write) calls Authorizer.Authorize exactly once, with its
//     action and the ARN of the resource it acts on, before it reads or
//     changes anything. A refusal is a *DeniedError, which the API layers
//     answer as AWS's AccessDeniedException (HTTP 403).
//
// The defaults, AnonymousAuthenticator and AllowAll, let everyone in as
// the anonymous caller. Package sigv4 authenticates AWS Signature Version 4
// against a Keyring (access keys whose secrets a KeyStore keeps sealed
// with the server key), and PolicyAuthorizer allows what the key's
// policies (IAM-like statements) allow.
//
// The actions and resources of every route are listed in actions.go.
//
// It sits on the shell side and imports only the standard library; sigv4
// adds the AWS SDK's signer.
package access
