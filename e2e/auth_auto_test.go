package e2e

import (
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/batch"
	"github.com/sharq-dev/sharq/internal/testwait"
)

// Ensure, against the real binary with --auth auto (the default), that a
// server started with no access key serves unsigned requests until a key
// is made beside it with sharq admin keys create; then, within seconds,
// unsigned requests are refused as AWS refuses them, requests signed with
// the new key are served, the server logs the change, and the sharq CLI
// says what it needs; deleting the key does not open the server again,
// nor does a restart with --auth auto: only --auth none does.
func TestAuthAutoFirstKey(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := startServer(t, serverOptions{dataDir: dir})
	anon := batch.New(s.client().Options(), func(o *batch.Options) { o.Credentials = aws.AnonymousCredentials{} })
	unsigned := func() error {
		_, err := anon.DescribeJobQueues(ctx(t), &batch.DescribeJobQueuesInput{})
		return err
	}
	fatalIf(t, "an unsigned request before any key", unsigned())

	admin := createKey(t, dir, "admin", "AdministratorAccess")
	testwait.Until(t, 10*time.Second, func() error {
		if err := unsigned(); apiCode(err) != "MissingAuthenticationTokenException" {
			return notYet("an unsigned request after the first key was made: %v", err)
		}
		return nil
	})
	_, err := s.clientWith(admin).DescribeJobQueues(ctx(t), &batch.DescribeJobQueuesInput{})
	fatalIf(t, "a request signed with the new key", err)
	// The server logs the change just after making it, and its log reaches
	// the test through a pipe: it is waited for, not looked for once.
	signedNow := "access key " + admin.ID + " exists: requests must now be signed"
	testwait.True(t, 10*time.Second, "the server to log "+signedNow, func() bool { return strings.Contains(s.log.String(), signedNow) })
	out, err := runSharq(t, s, key{}, "shares")
	for _, w := range []string{"requires a sharq access key", "AWS_ACCESS_KEY_ID", "sharq admin keys create", "-o env"} {
		if err == nil || !strings.Contains(out, w) {
			t.Errorf("sharq shares without a key: %v, output lacks %q:\n%s", err, w, out)
		}
	}

	if out, err := exec.Command(sharqBin, "admin", "keys", "delete", "--data-dir", dir, "admin").CombinedOutput(); err != nil {
		t.Fatalf("sharq admin keys delete admin: %v\n%s", err, out)
	}
	time.Sleep(3 * time.Second) // a dozen rounds of the server's key watch (250 ms), in which it must not open again
	if err := unsigned(); apiCode(err) != "MissingAuthenticationTokenException" {
		t.Errorf("an unsigned request once the last key was deleted: %v, want MissingAuthenticationTokenException", err)
	}
	s.stop()

	// Nor does a restart with --auth auto: a key was made once, so the
	// server stays signed until an admin opens it with --auth none.
	s = startServer(t, serverOptions{dataDir: dir})
	anon = batch.New(s.client().Options(), func(o *batch.Options) { o.Credentials = aws.AnonymousCredentials{} })
	if err := unsigned(); apiCode(err) != "MissingAuthenticationTokenException" {
		t.Errorf("an unsigned request after a restart with no key left: %v, want MissingAuthenticationTokenException", err)
	}
	refused := "no access key exists: every request is refused"
	testwait.True(t, 10*time.Second, "the restarted server to log "+refused, func() bool { return strings.Contains(s.log.String(), refused) })
	s.stop()
	s = startServer(t, serverOptions{dataDir: dir, args: []string{"--auth", "none"}})
	anon = batch.New(s.client().Options(), func(o *batch.Options) { o.Credentials = aws.AnonymousCredentials{} })
	fatalIf(t, "an unsigned request after a restart with --auth none", unsigned())
	s.stop()
}
