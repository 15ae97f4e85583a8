package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
)

// certReloader serves the certificate of --tls-cert and --tls-key, read
// again on SIGHUP so a renewed certificate needs no restart.
type certReloader struct {
	certFile, keyFile string
	cert              atomic.Pointer[tls.Certificate]
}

func newCertReloader(certFile, keyFile string) (*certReloader, error) {
	r := &certReloader{certFile: certFile, keyFile: keyFile}
	if err := r.load(); err != nil {
		return nil, err
	}
	return r, nil
}

func (r *certReloader) load() error {
	c, err := tls.LoadX509KeyPair(r.certFile, r.keyFile)
	if err != nil {
		return fmt.Errorf("tls: %w", err)
	}
	r.cert.Store(&c)
	return nil
}

func (r *certReloader) config() *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
			return r.cert.Load(), nil
		},
	}
}

// reloadOnHUP reloads the certificate at each SIGHUP until ctx ends; a
// certificate that fails to load leaves the old one in use.
func (r *certReloader) reloadOnHUP(ctx context.Context, log *slog.Logger) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
			if err := r.load(); err != nil {
				log.Error("reload TLS certificate; keeping the old one", "err", err)
				continue
			}
			log.Info("reloaded TLS certificate", "cert", r.certFile)
		}
	}
}

// setUpTLS gives srv the certificate of --tls-cert and --tls-key, reloaded
// on SIGHUP until ctx ends, and returns the scheme it serves.
func setUpTLS(ctx context.Context, cfg serveConfig, srv *http.Server, log *slog.Logger) (string, error) {
	if cfg.tlsCert == "" && cfg.tlsKey == "" {
		return "http", nil
	}
	if cfg.tlsCert == "" || cfg.tlsKey == "" {
		return "", errors.New("--tls-cert and --tls-key go together")
	}
	certs, err := newCertReloader(cfg.tlsCert, cfg.tlsKey)
	if err != nil {
		return "", err
	}
	srv.TLSConfig = certs.config()
	go certs.reloadOnHUP(ctx, log)
	return "https", nil
}
