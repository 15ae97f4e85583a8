package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/batch"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/sharq-dev/sharq/internal/sharqapi"
)

// connFlags say which server to talk to and how to sign for it.
type connFlags struct {
	endpoint string
	region   string
	profile  string
}

func (c *connFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&c.endpoint, "endpoint", defaultEndpoint(),
		"the sharq server's URL ($SHARQ_ENDPOINT or $AWS_ENDPOINT_URL_BATCH when set)")
	fs.StringVar(&c.region, "region", "", "region to sign requests for (default: the AWS configuration's, else us-east-1)")
	fs.StringVar(&c.profile, "profile", "", "AWS profile whose credentials sign requests (default $AWS_PROFILE)")
}

func defaultEndpoint() string {
	for _, env := range []string{"SHARQ_ENDPOINT", "AWS_ENDPOINT_URL_BATCH"} {
		if v := os.Getenv(env); v != "" {
			return v
		}
	}
	return DefaultEndpoint
}

// client talks to one server: the AWS Batch API through the SDK, sharq's
// own routes over plain HTTP.
type client struct {
	batch *batch.Client
	http  *http.Client // for sharq's own routes: signs every request
	base  string       // the endpoint without a trailing slash
}

// dial loads the AWS configuration (environment, shared files, profile)
// and points a Batch client at the endpoint. sharq accepts unsigned
// requests, so where no credentials are configured requests are signed
// with dummy ones instead of failing.
func (c *connFlags) dial(ctx context.Context) (*client, error) {
	u, err := url.Parse(c.endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, usagef("--endpoint must be an http:// or https:// URL, not %q", c.endpoint)
	}
	var opts []func(*config.LoadOptions) error
	if c.region != "" {
		opts = append(opts, config.WithRegion(c.region))
	}
	if c.profile != "" {
		opts = append(opts, config.WithSharedConfigProfile(c.profile))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("AWS configuration: %w", err)
	}
	if cfg.Region == "" {
		cfg.Region = "us-east-1"
	}
	var chain aws.CredentialsProvider
	if credentialsConfigured(c.profile) {
		chain = cfg.Credentials
	}
	cfg.Credentials = aws.NewCredentialsCache(fallbackCredentials{chain})
	base := strings.TrimSuffix(c.endpoint, "/")
	transport, err := caBundleTransport()
	if err != nil {
		return nil, err
	}
	hc := &http.Client{Transport: transport}
	bc := batch.NewFromConfig(cfg, func(o *batch.Options) {
		o.BaseEndpoint = aws.String(base)
		o.HTTPClient = hc
		// A local server either answers at once or is down: retry once,
		// quickly. Submissions carry a client token, so a retry never
		// submits twice.
		o.Retryer = retry.NewStandard(func(so *retry.StandardOptions) {
			so.MaxAttempts = 2
			so.Backoff = retry.NewExponentialJitterBackoff(200 * time.Millisecond)
		})
	})
	// sharq's own routes are signed like the Batch API's.
	sharqHTTP := &http.Client{Transport: newSigningTransport(transport, cfg.Credentials, cfg.Region)}
	return &client{batch: bc, http: sharqHTTP, base: base}, nil
}

// credentialsConfigured tells whether the user set up AWS credentials
// anywhere the SDK looks without asking the network.
func credentialsConfigured(profile string) bool {
	if profile != "" {
		return true
	}
	for _, env := range []string{"AWS_ACCESS_KEY_ID", "AWS_PROFILE", "AWS_WEB_IDENTITY_TOKEN_FILE",
		"AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"} {
		if os.Getenv(env) != "" {
			return true
		}
	}
	for _, f := range []string{config.DefaultSharedCredentialsFilename(), config.DefaultSharedConfigFilename()} {
		if _, err := os.Stat(f); err == nil {
			return true
		}
	}
	return false
}

// fallbackCredentials are the configured ones when they resolve, else
// dummy ones: a sharq server takes any signature.
type fallbackCredentials struct{ chain aws.CredentialsProvider }

func (f fallbackCredentials) Retrieve(ctx context.Context) (aws.Credentials, error) {
	if f.chain != nil {
		ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		if c, err := f.chain.Retrieve(ctx); err == nil {
			return c, nil
		}
	}
	return aws.Credentials{AccessKeyID: "sharq", SecretAccessKey: "sharq", Source: "sharq-dummy"}, nil
}

// captureBody keeps the raw JSON of an SDK call's response, which -o json
// prints as the AWS CLI would, rather than the SDK's Go structs.
func captureBody(dst *[]byte) func(*batch.Options) {
	return func(o *batch.Options) {
		o.APIOptions = append(o.APIOptions, func(st *middleware.Stack) error {
			return st.Deserialize.Add(middleware.DeserializeMiddlewareFunc("sharqCaptureBody",
				func(ctx context.Context, in middleware.DeserializeInput, next middleware.DeserializeHandler) (middleware.DeserializeOutput, middleware.Metadata, error) {
					out, md, err := next.HandleDeserialize(ctx, in)
					if resp, ok := out.RawResponse.(*smithyhttp.Response); ok && resp.Body != nil {
						b, _ := io.ReadAll(resp.Body)
						resp.Body.Close()
						*dst = b
						resp.Body = io.NopCloser(bytes.NewReader(b))
					}
					return out, md, err
				}), middleware.After)
		})
	}
}

// sharqGet sends a GET to one of sharq's own routes.
func (c *client) sharqGet(ctx context.Context, path string, q url.Values) (*http.Response, error) {
	u := c.base + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	return c.do(req)
}

// do sends a request to sharq's routes and turns a non-2xx answer into an
// error carrying the server's message.
func (c *client) do(req *http.Request) (*http.Response, error) {
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 == 2 {
		return resp, nil
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var e sharqapi.Error
	msg := strings.TrimSpace(string(body))
	if json.Unmarshal(body, &e) == nil && e.Message != "" {
		msg = e.Message
		if code := resp.Header.Get("X-Amzn-ErrorType"); isAuthRefusal(code, msg) {
			return nil, &authRefusedError{code: code, msg: msg}
		}
	} else if resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusMethodNotAllowed {
		return nil, fmt.Errorf("the server at %s does not serve %s: is it a sharq server?", c.base, req.URL.Path)
	}
	if resp.StatusCode == http.StatusNotFound {
		return nil, &notFoundError{msg}
	}
	return nil, errors.New(msg)
}

// getJSON decodes the answer of a GET to one of sharq's routes.
func (c *client) getJSON(ctx context.Context, path string, q url.Values, out any) error {
	resp, err := c.sharqGet(ctx, path, q)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	return json.NewDecoder(resp.Body).Decode(out)
}

// postJSON sends in to one of sharq's routes and decodes the answer.
func (c *client) postJSON(ctx context.Context, path string, in, out any) error {
	return c.sendJSON(ctx, http.MethodPost, path, in, out)
}

// putJSON puts in at one of sharq's routes and decodes the answer.
func (c *client) putJSON(ctx context.Context, path string, in, out any) error {
	return c.sendJSON(ctx, http.MethodPut, path, in, out)
}

func (c *client) sendJSON(ctx context.Context, method, path string, in, out any) error {
	b, err := json.Marshal(in)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	return json.NewDecoder(resp.Body).Decode(out)
}

// printJSON writes v indented, or raw JSON bytes re-indented.
func printJSON(w io.Writer, v any) error {
	if raw, ok := v.([]byte); ok {
		var buf bytes.Buffer
		if err := json.Indent(&buf, raw, "", "  "); err != nil {
			return err
		}
		buf.WriteByte('\n')
		_, err := w.Write(buf.Bytes())
		return err
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
