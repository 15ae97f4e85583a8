package s3server_test

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	tm "github.com/aws/aws-sdk-go-v2/feature/s3/transfermanager"
	tmtypes "github.com/aws/aws-sdk-go-v2/feature/s3/transfermanager/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// Ensure an empty object (an empty __init__.py in a code channel) goes up
// and comes back through the transfer manager by ranges, as the executor
// stages it.
func TestEmptyObject(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.mustBucket(t, "data")
	_, err := e.client.PutObject(t.Context(), &s3.PutObjectInput{Bucket: aws.String("data"), Key: aws.String("code/__init__.py"), Body: strings.NewReader("")})
	fatalIf(t, "put", err)
	c := tm.New(e.client, func(o *tm.Options) { o.GetObjectType = tmtypes.GetObjectRanges })
	out, err := c.GetObject(t.Context(), &tm.GetObjectInput{Bucket: aws.String("data"), Key: aws.String("code/__init__.py")})
	fatalIf(t, "ranged get of an empty object", err)
	var b bytes.Buffer
	io.Copy(&b, out.Body)
	if b.Len() != 0 {
		t.Fatalf("%d bytes", b.Len())
	}
}
