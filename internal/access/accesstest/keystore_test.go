package accesstest_test

import (
	"testing"

	"github.com/sharq-dev/sharq/internal/access"
	"github.com/sharq-dev/sharq/internal/access/accesstest"
)

func TestKeys(t *testing.T) {
	accesstest.TestKeyStore(t, func(*testing.T) access.KeyStore { return &accesstest.Keys{} })
}

func TestAudit(t *testing.T) {
	accesstest.TestAuditStore(t, func(*testing.T) access.AuditStore { return &accesstest.Keys{} })
}
