package main

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/sharq-dev/sharq/internal/access"
	"github.com/sharq-dev/sharq/internal/access/sigv4"
	"github.com/sharq-dev/sharq/internal/s3server"
)

// awsS3 is the --s3-endpoint value that names AWS's own S3, reached with
// the usual AWS credential chain.
const awsS3 = "aws"

// builtinS3 is the S3 service sharq serves itself where no --s3-endpoint
// is given: buckets under <data-dir>/s3, served on the main listener to
// clients signed with sharq's keys, and on a loopback listener of its own
// to the executor, signed with a key made at start that only this process
// knows.
type builtinS3 struct {
	srv *s3server.Server
	// loopback is the executor's endpoint (http://127.0.0.1:PORT), and
	// key the credential it signs with.
	loopback string
	key      aws.Credentials
	close    func()
}

// wantsBuiltinS3 tells whether this server serves S3 itself: with no
// --s3-endpoint and an executor on this machine (a pod on a cluster
// cannot reach it).
func wantsBuiltinS3(cfg serveConfig) bool {
	return cfg.data.endpoint == "" && cfg.executor != "kube"
}

// openBuiltinS3 opens the buckets under dataDir/s3 and serves them to the
// executor on loopback; it removes abandoned multipart uploads until ctx
// ends.
func openBuiltinS3(ctx context.Context, cfg serveConfig, log *slog.Logger) (*builtinS3, error) {
	srv, err := s3server.New(s3server.Options{Dir: filepath.Join(cfg.dataDir, "s3"), Region: cfg.region, Logger: log,
		VirtualHosts: virtualHosts(cfg.listen), UploadTTL: cfg.data.uploadTTL})
	if err != nil {
		return nil, err
	}
	secret := make([]byte, 32)
	rand.Read(secret)
	key := aws.Credentials{AccessKeyID: "SHARQINTERNALS3", SecretAccessKey: hex.EncodeToString(secret)}
	internal := access.Identity{AccessKeyID: key.AccessKeyID, Principal: "arn:aws:iam::" + cfg.accountID + ":user/sharq-executor"}
	verifier := sigv4.New(sigv4.Options{Region: cfg.region, Services: []string{"s3"},
		Credentials: oneKey{cred: access.Credential{Identity: internal, Secret: key.SecretAccessKey}}})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("built-in S3: %w", err)
	}
	hs := &http.Server{Handler: access.Middleware(srv.WithAuthorizer(access.AllowAll{}), verifier, writeS3AuthError),
		ReadHeaderTimeout: 10 * time.Second}
	go hs.Serve(ln)
	ctx, cancel := context.WithCancel(ctx)
	cleaned := make(chan struct{})
	go func() { srv.Run(ctx); close(cleaned) }()
	log.Info("serving S3 for buckets in the data dir", "dir", filepath.Join(cfg.dataDir, "s3"))
	return &builtinS3{srv: srv, loopback: "http://" + ln.Addr().String(), key: key, close: func() {
		cancel()
		hs.Close()
		<-cleaned
	}}, nil
}

func (b *builtinS3) credentials() aws.CredentialsProvider {
	return credentials.NewStaticCredentialsProvider(b.key.AccessKeyID, b.key.SecretAccessKey, "")
}

// virtualHosts are the host names under which BUCKET.HOST addresses a
// bucket: localhost, and the listen address's host when it is a name.
func virtualHosts(listen string) []string {
	hosts := []string{"localhost"}
	if h, _, err := net.SplitHostPort(listen); err == nil && h != "" && net.ParseIP(h) == nil && h != "localhost" {
		hosts = append(hosts, h)
	}
	return hosts
}

// publicURL is where the jobs on this machine reach the main listener:
// an unspecified address through loopback.
func publicURL(scheme string, addr net.Addr) string {
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return scheme + "://" + addr.String()
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return scheme + "://" + net.JoinHostPort(host, port)
}

// isS3Request tells an S3 request on the main listener: signed for s3,
// or addressed to a bucket virtual-hosted style.
func isS3Request(r *http.Request) bool {
	if sigv4.ScopeService(r) == "s3" {
		return true
	}
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	return strings.HasSuffix(host, ".localhost")
}

// s3Split serves S3 requests with s3 (nil where this server serves no S3)
// and the rest with rest.
type s3Split struct {
	s3, rest http.Handler
	endpoint string // the --s3-endpoint used instead, for the refusal
}

func (h s3Split) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case !isS3Request(r):
		h.rest.ServeHTTP(w, r)
	case h.s3 != nil:
		h.s3.ServeHTTP(w, r)
	default:
		where := h.endpoint
		if where == awsS3 || where == "" {
			where = "AWS's S3"
		}
		s3server.WriteError(w, r, http.StatusNotImplemented, "NotImplemented", "This sharq serves no S3: its jobs use "+where+".")
	}
}

// s3AuthCodes are the codes S3 answers with where the other services'
// authentication codes say the same.
var s3AuthCodes = map[string]string{
	"InvalidSignatureException":           "SignatureDoesNotMatch",
	"UnrecognizedClientException":         "InvalidAccessKeyId",
	"MissingAuthenticationTokenException": "AccessDenied",
	"IncompleteSignatureException":        "AuthorizationHeaderMalformed",
	"AccessDeniedException":               "AccessDenied",
}

// writeS3AuthError answers an authentication failure in S3's XML shape.
func writeS3AuthError(w http.ResponseWriter, r *http.Request, err error) {
	var ae *access.AuthError
	if !errors.As(err, &ae) {
		s3server.WriteError(w, r, http.StatusInternalServerError, "InternalError", "internal error")
		return
	}
	s3server.WriteError(w, r, cmp.Or(ae.Status, http.StatusForbidden), cmp.Or(s3AuthCodes[ae.Code], ae.Code), ae.Message)
}

// oneKey is a CredentialSource of one key.
type oneKey struct{ cred access.Credential }

func (k oneKey) Credential(_ context.Context, id string) (access.Credential, error) {
	if id != k.cred.Identity.AccessKeyID {
		return access.Credential{}, access.ErrUnknownKey
	}
	return k.cred, nil
}
