// Package cli is the sharq client: the verbs people use against a running
// sharq server (apply, submit, jobs, describe, priority, cancel, logs, wait,
// shares, top, events). They speak the AWS Batch API through the AWS SDK
// for Go, so they work against any server that serves it, and read what the
// AWS API does not tell (share usage, waiting positions, logs, events)
// from sharq's own routes under /sharq/v1 (package sharqapi).
//
// Every verb prints a table for people or, with -o json, JSON for scripts,
// and exits 0 when it did what was asked, 1 when it failed (or the job it
// waited for failed), 2 on a usage error and 3 when what it names does not
// exist. Errors are one line on stderr.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"time"

	"github.com/aws/smithy-go"
)

// Exit codes.
const (
	ExitOK       = 0
	ExitFailure  = 1
	ExitUsage    = 2
	ExitNotFound = 3
)

// DefaultEndpoint is where a server started without flags listens.
const DefaultEndpoint = "http://127.0.0.1:8080"

// Test hooks: tests freeze the clock and shorten the polling so that output
// is stable and runs are quick.
var (
	now                    = time.Now
	pollInterval           = 500 * time.Millisecond
	stdin        io.Reader = os.Stdin
)

// usageError is a command line that cannot be run; it exits 2. shown
// tells that the flag package has already printed it with the usage.
type usageError struct {
	msg   string
	shown bool
}

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// notFoundError names something that does not exist; it exits 3.
type notFoundError struct{ msg string }

func (e *notFoundError) Error() string { return e.msg }

// authRefusedError is a request the server refused for want of a
// signature with an access key it knows: code and msg are its answer.
type authRefusedError struct{ code, msg string }

func (e *authRefusedError) Error() string { return e.code + ": " + e.msg }

// isAuthRefusal tells whether an error code (and message) is a server's
// refusal of an unsigned request or of an access key it does not know.
func isAuthRefusal(code, msg string) bool {
	switch code {
	case "MissingAuthenticationTokenException", "UnrecognizedClientException":
		return true
	}
	return strings.Contains(msg, "security token included in the request is invalid")
}

// explain says the refusal in sharq's terms: what the server wants and
// how to give it.
func (e *authRefusedError) explain(endpoint string) string {
	what := "requires a sharq access key and does not know the one the request was signed with, " +
		"which is not a sharq key or was disabled or deleted"
	switch {
	case e.code == "MissingAuthenticationTokenException":
		what = "requires requests signed with a sharq access key"
	case !credentialsConfigured(""):
		what = "requires a sharq access key, and no AWS credentials are configured here"
	}
	return fmt.Sprintf("the sharq server at %s %s (%s). Give one: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY "+
		"to a key's (`sharq admin keys create --name NAME --policy POLICY -o env` on the server prints them), "+
		"or use --profile with a profile that holds one", endpoint, what, e)
}

// exitError carries an exit code without a message of its own, for a job
// that failed while the verb itself worked.
type exitError struct{ code int }

func (e *exitError) Error() string { return fmt.Sprintf("exit %d", e.code) }

// verb is what each command shares: its name, its flags and where it writes.
type verb struct {
	name           string
	fs             *flag.FlagSet
	stdout, stderr io.Writer
	conn           connFlags
	output         string
}

// newVerb sets up a command's flag set with the connection flags and, when
// json is true, -o.
func newVerb(name, argsUsage, summary string, stdout, stderr io.Writer, json bool) *verb {
	v := &verb{name: name, fs: flag.NewFlagSet(name, flag.ContinueOnError), stdout: stdout, stderr: stderr, output: "table"}
	v.fs.SetOutput(stderr)
	v.fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: sharq %s [flags] %s\n\n%s\n\nflags:\n", name, argsUsage, summary)
		printFlags(stderr, v.fs)
	}
	v.conn.register(v.fs)
	if json {
		v.fs.StringVar(&v.output, "o", "table", "output format: table or json")
		v.fs.StringVar(&v.output, "output", "table", "output format: table or json")
	}
	return v
}

// parse reads the flags, which may come before, between or after the
// positional arguments; everything after "--" is positional. It checks the
// number of positional arguments against min and max (-1: no limit).
func (v *verb) parse(args []string, min, max int) ([]string, error) {
	var pos []string
	for {
		if err := v.fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, &usageError{msg: err.Error(), shown: true}
		}
		rest := v.fs.Args()
		if consumed := len(args) - len(rest); consumed > 0 && args[consumed-1] == "--" {
			pos = append(pos, rest...)
			break
		}
		if len(rest) == 0 {
			break
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
	if v.output != "table" && v.output != "json" {
		return nil, usagef("-o must be table or json, not %q", v.output)
	}
	if len(pos) < min || (max >= 0 && len(pos) > max) {
		return nil, usagef("wrong number of arguments (see 'sharq %s -h')", v.name)
	}
	return pos, nil
}

func (v *verb) json() bool { return v.output == "json" }

// given tells whether a flag was on the command line, for flags whose
// absence means "the server's default" rather than a value.
func (v *verb) given(name string) bool {
	found := false
	v.fs.Visit(func(f *flag.Flag) { found = found || f.Name == name })
	return found
}

// printFlags is flag.PrintDefaults, but a flag whose text already says
// what its default is gets no second "(default ...)".
func printFlags(w io.Writer, fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		typ, usage := flag.UnquoteUsage(f)
		line := "  -" + f.Name
		if typ != "" {
			line += " " + typ
		}
		if len(f.Name) == 1 && typ == "" {
			line += "\t"
		} else {
			line += "\n    \t"
		}
		line += strings.ReplaceAll(usage, "\n", "\n    \t")
		if !strings.Contains(usage, "default") && !zeroDefault(f) {
			if typ == "string" {
				line += fmt.Sprintf(" (default %q)", f.DefValue)
			} else {
				line += fmt.Sprintf(" (default %s)", f.DefValue)
			}
		}
		fmt.Fprintln(w, line)
	})
}

func zeroDefault(f *flag.Flag) bool {
	switch f.DefValue {
	case "", "0", "false", "0s":
		return true
	}
	return false
}

// exit turns a verb's outcome into its exit code, printing the error as
// one line.
func (v *verb) exit(err error) int {
	if err == nil {
		return ExitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	if errors.Is(err, flag.ErrHelp) {
		return ExitOK
	}
	var ue *usageError
	if errors.As(err, &ue) && ue.shown {
		return ExitUsage
	}
	code, msg := classify(err, v.conn.endpoint)
	fmt.Fprintf(v.stderr, "sharq %s: %s\n", v.name, msg)
	return code
}

// classify picks the exit code and the one-line message of an error: the
// server's own message for API errors, not the SDK's wrapping of it.
func classify(err error, endpoint string) (int, string) {
	var ue *usageError
	var nf *notFoundError
	var ar *authRefusedError
	var api smithy.APIError
	var op *net.OpError
	switch {
	case errors.As(err, &ue):
		return ExitUsage, ue.msg
	case errors.As(err, &nf):
		return ExitNotFound, nf.msg
	case errors.As(err, &ar):
		return ExitFailure, ar.explain(endpoint)
	case errors.As(err, &api) && isAuthRefusal(api.ErrorCode(), api.ErrorMessage()):
		return ExitFailure, (&authRefusedError{code: api.ErrorCode(), msg: api.ErrorMessage()}).explain(endpoint)
	case errors.As(err, &api):
		msg := api.ErrorMessage()
		if msg == "" {
			msg = api.ErrorCode()
		}
		if strings.Contains(msg, "does not exist") {
			return ExitNotFound, msg
		}
		return ExitFailure, msg
	case errors.As(err, &op):
		return ExitFailure, fmt.Sprintf("cannot reach the sharq server at %s: %v", endpoint, op.Err)
	case errors.Is(err, context.Canceled):
		return ExitFailure, "interrupted"
	}
	return ExitFailure, err.Error()
}

// isTerminal tells whether w is a terminal, where live views redraw.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
