// Package sigv4 authenticates requests signed with AWS Signature Version
// 4, in the Authorization header form and the presigned query form.
//
// It checks what the request says about itself (the scope's date, region,
// service and terminator; the clock skew; the payload hash against the
// body), then recomputes the signature with the AWS SDK for Go's own
// signer over exactly the headers the client listed, and compares the two
// in constant time. A refusal is an *access.AuthError with AWS's code and
// HTTP status. It sits on the shell side.
package sigv4

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/sharq-dev/sharq/internal/access"
)

// MaxSkew is how far a request's date may be from the server's clock.
const MaxSkew = 15 * time.Minute

const unsignedPayload = "UNSIGNED-PAYLOAD"

// Options configure a Verifier.
type Options struct {
	// Credentials finds the secret of an access key.
	Credentials access.CredentialSource
	// Region is what a credential's scope must name (default us-east-1).
	Region string
	// Services are the services a credential's scope may name (default
	// batch). Which operation a service's name may sign is the router's
	// to check: see ScopeService.
	Services []string
	// GlobalServices are services whose clients sign in us-east-1
	// whatever the server's region, as AWS's global IAM is signed; a
	// scope for one of them may name us-east-1 as well as Region.
	GlobalServices []string
	// AllowUnsigned lets a request with no signature at all in as
	// access.Anonymous, for the authorizer to decide; otherwise it is
	// refused with MissingAuthenticationTokenException.
	AllowUnsigned bool
	// MaxBody caps the body read to check its hash (default 1 MiB).
	MaxBody int64
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Verifier is an access.Authenticator for SigV4-signed requests. It is
// safe for concurrent use.
type Verifier struct {
	opts   Options
	signer *v4.Signer
}

// New returns a Verifier.
func New(opts Options) *Verifier {
	if opts.Region == "" {
		opts.Region = "us-east-1"
	}
	if len(opts.Services) == 0 {
		opts.Services = []string{"batch"}
	}
	if opts.MaxBody <= 0 {
		opts.MaxBody = 1 << 20
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Verifier{opts: opts, signer: v4.NewSigner()}
}

var _ access.Authenticator = (*Verifier)(nil)

// Authenticate returns the identity of the access key that signed r.
func (v *Verifier) Authenticate(r *http.Request) (access.Identity, error) {
	s, err := parseRequest(r)
	if errors.Is(err, errUnsigned) {
		if v.opts.AllowUnsigned {
			return access.Anonymous, nil
		}
		return access.Identity{}, missing()
	}
	if err != nil {
		return access.Identity{}, err
	}
	if r.Header.Get("X-Amz-Security-Token") != "" || r.URL.Query().Has("X-Amz-Security-Token") {
		return access.Identity{}, &access.AuthError{Status: http.StatusForbidden, Code: codeUnrecognized,
			Message: "Temporary credentials (X-Amz-Security-Token) are not supported: sign with an access key that sharq issued."}
	}
	if err := v.checkScope(s); err != nil {
		return access.Identity{}, err
	}
	if err := v.checkTime(s); err != nil {
		return access.Identity{}, err
	}
	if err := checkHeaders(s); err != nil {
		return access.Identity{}, err
	}
	cred, err := v.opts.Credentials.Credential(r.Context(), s.keyID)
	if errors.Is(err, access.ErrUnknownKey) {
		return access.Identity{}, unrecognized()
	}
	if err != nil {
		return access.Identity{}, fmt.Errorf("look up access key: %w", err)
	}
	var payload string
	if s.service == "s3" {
		payload, err = s3Payload(r, s)
	} else {
		payload, err = v.payloadHash(r)
	}
	if err != nil {
		return access.Identity{}, err
	}
	want, err := v.recompute(r.Context(), r, s, cred.Secret, payload)
	if err != nil {
		return access.Identity{}, err
	}
	if subtle.ConstantTimeCompare([]byte(want), []byte(s.sig)) != 1 {
		return access.Identity{}, invalidf("%s", msgMismatch)
	}
	if s.service == "s3" {
		streamBody(r, s, cred.Secret, payload)
	}
	return cred.Identity, nil
}

// ScopeService is the service that r's credential scope names, "" for a
// request that carries no well-formed signature. It reads only what r says
// of itself: once Authenticate has accepted r, the signature covers it.
func ScopeService(r *http.Request) string {
	s, err := parseRequest(r)
	if err != nil {
		return ""
	}
	return s.service
}

// WrongService is the refusal of a request whose credential scope names
// another service than the one its operation belongs to, as AWS words it.
func WrongService(want string) error {
	return invalidf("Credential should be scoped to correct service: '%s'.", want)
}

// checkScope checks the credential's scope as AWS words it.
func (v *Verifier) checkScope(s *signature) error {
	switch {
	case s.scopeDate != s.date.Format("20060102"):
		return invalidf("Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP: '%s' != '%s', from '%s'.",
			truncate(s.scopeDate), s.date.Format("20060102"), s.dateRaw)
	case s.region != v.opts.Region && !(s.region == "us-east-1" && slices.Contains(v.opts.GlobalServices, s.service)):
		return invalidf("Credential should be scoped to a valid region, not '%s'.", truncate(s.region))
	case !slices.Contains(v.opts.Services, s.service):
		return invalidf("Credential should be scoped to correct service: '%s'.", strings.Join(v.opts.Services, "' or '"))
	case s.term != terminator:
		return invalidf("Credential should be scoped with a valid terminator: '%s', not '%s'.", terminator, truncate(s.term))
	}
	return nil
}

// checkTime refuses a date more than MaxSkew from now, and a presigned
// URL past its expiry.
func (v *Verifier) checkTime(s *signature) error {
	now := v.opts.Now().UTC()
	if s.date.After(now.Add(MaxSkew)) {
		return invalidf("Signature not yet current: %s is still later than %s (%s + 15 min.)",
			s.dateRaw, now.Add(MaxSkew).Format(amzDateFormat), now.Format(amzDateFormat))
	}
	if s.presigned {
		if now.After(s.date.Add(s.expires)) {
			return invalidf("Signature expired: %s is now earlier than %s (%s - %d sec.)",
				s.date.Add(s.expires).Format(amzDateFormat), now.Format(amzDateFormat), now.Format(amzDateFormat), int(s.expires.Seconds()))
		}
		return nil
	}
	if s.date.Before(now.Add(-MaxSkew)) {
		return invalidf("Signature expired: %s is now earlier than %s (%s - 15 min.)",
			s.dateRaw, now.Add(-MaxSkew).Format(amzDateFormat), now.Format(amzDateFormat))
	}
	return nil
}

// unsignable are headers the SDK's signer never signs; a client that
// lists one signed with rules of its own.
var unsignable = map[string]bool{"authorization": true, "user-agent": true, "x-amzn-trace-id": true,
	"expect": true, "transfer-encoding": true}

// checkHeaders checks the signed headers' list: host must be signed, and
// x-amz-date too in the header form.
func checkHeaders(s *signature) error {
	var host, date bool
	for _, h := range s.signedHeaders {
		if unsignable[h] {
			return incompletef("The header '%s' cannot be signed; leave it out of SignedHeaders.", truncate(h))
		}
		host = host || h == "host"
		date = date || h == "x-amz-date"
	}
	if !host {
		return incompletef("SignedHeaders must include 'host', got '%s'.", truncate(s.signedHeadersRaw))
	}
	if !s.presigned && !date {
		return incompletef("SignedHeaders must include 'x-amz-date', got '%s'.", truncate(s.signedHeadersRaw))
	}
	return nil
}

// payloadHash reads r's body (leaving it readable again), checks it
// against X-Amz-Content-Sha256 when the client sent one, and returns the
// hash the signature covers. UNSIGNED-PAYLOAD is taken only for an empty
// body, where there is nothing to tamper with.
func (v *Verifier) payloadHash(r *http.Request) (string, error) {
	body := []byte{}
	if r.Body != nil && r.Body != http.NoBody {
		b, err := io.ReadAll(io.LimitReader(r.Body, v.opts.MaxBody+1))
		r.Body.Close()
		if err != nil {
			return "", fmt.Errorf("read body: %w", err)
		}
		if int64(len(b)) > v.opts.MaxBody {
			return "", &access.AuthError{Status: http.StatusRequestEntityTooLarge, Code: "ClientException",
				Message: fmt.Sprintf("request body exceeds %d bytes", v.opts.MaxBody)}
		}
		body = b
		r.Body = io.NopCloser(bytes.NewReader(b))
	}
	sum := sha256.Sum256(body)
	hash := hex.EncodeToString(sum[:])
	claimed := r.Header.Get("X-Amz-Content-Sha256")
	switch {
	case claimed == "":
		return hash, nil
	case claimed == unsignedPayload && len(body) == 0:
		return unsignedPayload, nil
	case claimed != hash:
		return "", invalidf("The provided 'x-amz-content-sha256' header does not match what was computed.")
	}
	return hash, nil
}

// recompute signs a copy of r that holds only the headers the client
// listed, with the client's date and the key's secret, and returns the
// signature the client should have sent.
func (v *Verifier) recompute(ctx context.Context, r *http.Request, s *signature, secret, payload string) (string, error) {
	c := &http.Request{Method: r.Method, Host: r.Host, Header: http.Header{},
		URL: &url.URL{Scheme: "http", Host: r.Host, Path: r.URL.Path, RawPath: r.URL.RawPath}}
	for _, h := range s.signedHeaders {
		switch h {
		case "host":
		case "content-length":
			// The signer signs the length it is given, when it is not 0.
			c.ContentLength = r.ContentLength
		default:
			c.Header[http.CanonicalHeaderKey(h)] = r.Header.Values(h)
		}
	}
	creds := aws.Credentials{AccessKeyID: s.keyID, SecretAccessKey: secret}
	// S3 signs its path as sent, not escaped a second time.
	s3Path := func(o *v4.SignerOptions) { o.DisableURIPathEscaping = s.service == "s3" }
	if s.presigned {
		q := r.URL.Query()
		q.Del("X-Amz-Signature")
		c.URL.RawQuery = q.Encode()
		u, _, err := v.signer.PresignHTTP(ctx, creds, c, payload, s.service, s.region, s.date,
			func(o *v4.SignerOptions) { o.DisableHeaderHoisting = true }, s3Path)
		if err != nil {
			return "", fmt.Errorf("presign: %w", err)
		}
		_, sig, _ := strings.Cut(u, "X-Amz-Signature=")
		return sig, nil
	}
	c.URL.RawQuery = r.URL.RawQuery
	if err := v.signer.SignHTTP(ctx, creds, c, payload, s.service, s.region, s.date, s3Path); err != nil {
		return "", fmt.Errorf("sign: %w", err)
	}
	_, sig, _ := strings.Cut(c.Header.Get("Authorization"), "Signature=")
	return sig, nil
}
