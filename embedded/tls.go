package embedded

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
)

// TLSFiles are the PEM files a client needs for the bundled cluster in TLS
// mode: the same paths work for etcdctl's --cacert, --cert and --key.
type TLSFiles struct {
	CA   string
	Cert string
	Key  string
	// ServerCert and ServerKey are the server's pair, valid for 127.0.0.1,
	// ::1 and localhost.
	ServerCert string
	ServerKey  string
}

// ClientConfig is the client side TLS configuration for these files.
func (f *TLSFiles) ClientConfig() (*tls.Config, error) {
	info := transport.TLSInfo{CertFile: f.Cert, KeyFile: f.Key, TrustedCAFile: f.CA}
	return info.ClientConfig()
}

// serverInfo requires client certificates signed by the CA, as kubeadm sets
// up etcd for the API server.
func (f *TLSFiles) serverInfo() transport.TLSInfo {
	return transport.TLSInfo{
		CertFile:       f.ServerCert,
		KeyFile:        f.ServerKey,
		TrustedCAFile:  f.CA,
		ClientCertAuth: true,
	}
}

// EnsureTLS reuses the certificates in dir or, when there are none, makes a
// throwaway CA and a server and a client certificate signed by it. Reuse keeps
// a reopened data dir working with the ETCDCTL_* variables printed before.
func EnsureTLS(dir string) (*TLSFiles, error) {
	f := &TLSFiles{
		CA:         filepath.Join(dir, "ca.crt"),
		Cert:       filepath.Join(dir, "client.crt"),
		Key:        filepath.Join(dir, "client.key"),
		ServerCert: filepath.Join(dir, "server.crt"),
		ServerKey:  filepath.Join(dir, "server.key"),
	}
	if _, err := os.Stat(f.ServerKey); err == nil {
		return f, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create TLS dir: %w", err)
	}
	ca, caKey, err := issue(&x509.Certificate{
		Subject:               pkix.Name{CommonName: "etcdscope throwaway CA"},
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}, nil, nil)
	if err != nil {
		return nil, err
	}
	if err := writePEM(f.CA, "CERTIFICATE", ca.Raw); err != nil {
		return nil, err
	}
	leaves := []struct {
		template  *x509.Certificate
		cert, key string
	}{
		{&x509.Certificate{
			Subject:     pkix.Name{CommonName: "etcdscope-etcd"},
			DNSNames:    []string{"localhost"},
			IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
			KeyUsage:    x509.KeyUsageDigitalSignature,
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		}, f.ServerCert, f.ServerKey},
		{&x509.Certificate{
			Subject:     pkix.Name{CommonName: "etcdscope-client"},
			KeyUsage:    x509.KeyUsageDigitalSignature,
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		}, f.Cert, f.Key},
	}
	for _, l := range leaves {
		cert, key, err := issue(l.template, ca, caKey)
		if err != nil {
			return nil, err
		}
		der, err := x509.MarshalECPrivateKey(key)
		if err != nil {
			return nil, err
		}
		if err := writePEM(l.cert, "CERTIFICATE", cert.Raw); err != nil {
			return nil, err
		}
		if err := writePEM(l.key, "EC PRIVATE KEY", der); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// issue signs template with parent's key, or self-signs it when parent is nil.
func issue(template, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return nil, nil, err
	}
	template.SerialNumber = serial
	template.NotBefore = time.Now().Add(-time.Hour)
	template.NotAfter = time.Now().AddDate(1, 0, 0)
	if parent == nil {
		parent, parentKey = template, key
	}
	der, err := x509.CreateCertificate(rand.Reader, template, parent, &key.PublicKey, parentKey)
	if err != nil {
		return nil, nil, fmt.Errorf("issue certificate %q: %w", template.Subject.CommonName, err)
	}
	cert, err := x509.ParseCertificate(der)
	return cert, key, err
}

func writePEM(path, blockType string, der []byte) error {
	data := pem.EncodeToMemory(&pem.Block{Type: blockType, Bytes: der})
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
