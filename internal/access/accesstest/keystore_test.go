package accesstest_test

import (
	"testing"

	"github.com/sharq-dev/sharq/internal/access"
	"github.com/sharq-dev/sharq/internal/access/accesstest"
)

func TestKeys(t *testing.T) {
	accesstest.TestKeyStore(t, func(*testing.T) access.KeyStore { return &accesstest.Keys{} })
}
