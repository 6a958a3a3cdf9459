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

	"github.com/etcdscope/etcdscope/embedded/datadir"
	"go.etcd.io/etcd/client/pkg/v3/transport"
)

// TLSFiles are the PEM files of the bundled cluster's TLS, in the data
// dir's tls/: a client needs CA, Cert and Key, the same paths etcdctl's
// --cacert, --cert and --key take.
type TLSFiles struct {
	CA   string
	Cert string
	Key  string
	// ServerCert and ServerKey are the members' pair, valid for 127.0.0.1,
	// ::1 and localhost, for serving clients and for the members' own
	// connections to each other, both ways.
	ServerCert string
	ServerKey  string
}

// ClientConfig is the client side TLS configuration for these files.
func (f *TLSFiles) ClientConfig() (*tls.Config, error) {
	info := transport.TLSInfo{CertFile: f.Cert, KeyFile: f.Key, TrustedCAFile: f.CA}
	return info.ClientConfig()
}

// serverInfo requires client certificates signed by the CA, as kubeadm sets
// up etcd for the API server and for its peers.
func (f *TLSFiles) serverInfo() transport.TLSInfo {
	return transport.TLSInfo{
		CertFile:       f.ServerCert,
		KeyFile:        f.ServerKey,
		TrustedCAFile:  f.CA,
		ClientCertAuth: true,
	}
}

// EnsureTLS reuses the CA in dir, when its key is the user's own and
// private (datadir.ReadPrivate), or makes a throwaway one, and issues a
// server and a client certificate signed by it. The pairs are issued anew at
// every start, so that nothing but the CA is taken from an earlier run; the
// paths stay, so the ETCDCTL_* variables printed before keep working.
func EnsureTLS(dir string) (*TLSFiles, error) {
	if err := datadir.Ensure(dir); err != nil {
		return nil, err
	}
	f := &TLSFiles{
		CA:         filepath.Join(dir, "ca.crt"),
		Cert:       filepath.Join(dir, "client.crt"),
		Key:        filepath.Join(dir, "client.key"),
		ServerCert: filepath.Join(dir, "server.crt"),
		ServerKey:  filepath.Join(dir, "server.key"),
	}
	ca, caKey, err := loadCA(f.CA, filepath.Join(dir, "ca.key"))
	if err != nil {
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
		if err := writePair(l.cert, l.key, cert, key); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// loadCA reads the CA's pair, or makes and writes one when there is no key.
func loadCA(certPath, keyPath string) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	keyPEM, err := datadir.ReadPrivate(keyPath)
	if errors.Is(err, os.ErrNotExist) {
		ca, caKey, err := issue(&x509.Certificate{
			Subject:               pkix.Name{CommonName: "etcdscope throwaway CA"},
			IsCA:                  true,
			BasicConstraintsValid: true,
			KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		}, nil, nil)
		if err == nil {
			err = writePair(certPath, keyPath, ca, caKey)
		}
		return ca, caKey, err
	}
	if err != nil {
		return nil, nil, fmt.Errorf("the etcd CA: %w", err)
	}
	certPEM, err := datadir.ReadFile(certPath)
	if err != nil {
		return nil, nil, fmt.Errorf("the etcd CA: %w", err)
	}
	ca, caKey, err := parsePair(certPEM, keyPEM)
	if err != nil {
		return nil, nil, fmt.Errorf("the etcd CA in %s: %w", filepath.Dir(keyPath), err)
	}
	return ca, caKey, nil
}

func parsePair(certPEM, keyPEM []byte) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	cb, _ := pem.Decode(certPEM)
	kb, _ := pem.Decode(keyPEM)
	if cb == nil || kb == nil {
		return nil, nil, errors.New("not PEM")
	}
	cert, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		return nil, nil, err
	}
	key, err := x509.ParseECPrivateKey(kb.Bytes)
	if err != nil {
		return nil, nil, err
	}
	return cert, key, nil
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

// writePair writes a certificate and its key as PEM, each mode 0600.
func writePair(certPath, keyPath string, cert *x509.Certificate, key *ecdsa.PrivateKey) error {
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	if err := datadir.WriteFile(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw})); err != nil {
		return err
	}
	return datadir.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}))
}
