package e2e

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/batch"
	"github.com/sharq-dev/sharq/internal/testwait"
)

// writeCert writes a self-signed certificate for 127.0.0.1 (its own CA)
// and its key as PEM files, and returns it.
func writeCert(t *testing.T, certFile, keyFile string, serial int64) *x509.Certificate {
	t.Helper()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	fatalIf(t, "key", err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: "sharq test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &priv.PublicKey, priv)
	fatalIf(t, "certificate", err)
	keyDER, err := x509.MarshalECPrivateKey(priv)
	fatalIf(t, "marshal key", err)
	fatalIf(t, "write cert", os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644))
	fatalIf(t, "write key", os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600))
	cert, err := x509.ParseCertificate(der)
	fatalIf(t, "parse", err)
	return cert
}

// Ensure sharq serves HTTPS with --tls-cert and --tls-key, the Go SDK and
// the AWS CLI (--ca-bundle) work against it with a signed key, and SIGHUP
// loads a renewed certificate.
func TestTLS(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	first := writeCert(t, certFile, keyFile, 1)
	caFile := filepath.Join(dir, "ca.pem")
	ca, _ := os.ReadFile(certFile)
	os.WriteFile(caFile, ca, 0o644)
	pool := x509.NewCertPool()
	pool.AddCert(first)
	admin := createKey(t, dir, "admin", "AdministratorAccess")
	s := startServer(t, serverOptions{dataDir: dir, tls: &tls.Config{RootCAs: pool},
		args: []string{"--auth", "sigv4", "--tls-cert", certFile, "--tls-key", keyFile}})
	if !strings.HasPrefix(s.url, "https://") {
		t.Fatalf("url %s", s.url)
	}
	_, err := s.clientWith(admin).DescribeJobQueues(ctx(t), &batch.DescribeJobQueuesInput{})
	fatalIf(t, "DescribeJobQueues over HTTPS", err)

	cmd := exec.CommandContext(ctx(t), "aws", "batch", "describe-job-queues", "--endpoint-url", s.url, "--region", region, "--ca-bundle", caFile)
	cmd.Env = append(os.Environ(), append(admin.env(), "AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null", "AWS_PAGER=")...)
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), `"jobQueues"`) {
		t.Errorf("aws batch describe-job-queues --ca-bundle: %v\n%s", err, out)
	}

	// The sharq CLI trusts AWS_CA_BUNDLE, as the AWS CLI does.
	sharqCmd := exec.CommandContext(ctx(t), sharqBin, "shares", "--endpoint", s.url)
	sharqCmd.Env = append(os.Environ(), append(admin.env(), "AWS_CA_BUNDLE="+caFile, "AWS_REGION="+region,
		"AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null")...)
	if out, err := sharqCmd.CombinedOutput(); err != nil {
		t.Errorf("sharq shares with AWS_CA_BUNDLE: %v\n%s", err, out)
	}

	// Renew the certificate and tell the server.
	writeCert(t, certFile, keyFile, 2)
	fatalIf(t, "SIGHUP", s.cmd.Process.Signal(syscall.SIGHUP))
	testwait.Until(t, 10*time.Second, func() error {
		conn, err := tls.Dial("tcp", strings.TrimPrefix(s.url, "https://"), &tls.Config{InsecureSkipVerify: true})
		if err != nil {
			return err
		}
		defer conn.Close()
		if n := conn.ConnectionState().PeerCertificates[0].SerialNumber.Int64(); n != 2 {
			return fmt.Errorf("serving certificate %d, want the renewed one (2)", n)
		}
		return nil
	})
	s.stop()
}
