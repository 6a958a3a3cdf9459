package kube

import (
	"crypto"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"

	"github.com/etcdscope/etcdscope/embedded/datadir"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"
	kubeadmapi "k8s.io/kubernetes/cmd/kubeadm/app/apis/kubeadm"
	"k8s.io/kubernetes/cmd/kubeadm/app/util/pkiutil"
)

// The files of the control plane's PKI, in the pki dir, named as kubeadm
// names them in /etc/kubernetes/pki.
const (
	caName        = "ca"        // signs the serving certificate and every client's
	servingName   = "apiserver" // kube-apiserver's serving pair
	saName        = "sa"        // signs service account tokens (sa.key, sa.pub)
	keyAlgorithm  = kubeadmapi.EncryptionAlgorithmECDSAP256
	servingHost   = "127.0.0.1"
	kubernetesSvc = "kubernetes.default.svc.cluster.local"
)

// pki is the control plane's certificate authority, kept in dir: a reused
// data dir keeps its CA, so kubeconfigs written before stay valid.
type pki struct {
	dir   string
	ca    *x509.Certificate
	caKey crypto.Signer
	caPEM []byte
}

// loadPKI reuses the CA and the service account key in dir, when their
// keys are the user's own and private (datadir.ReadPrivate), or makes them,
// and issues kube-apiserver's serving pair anew. Every file kube-apiserver
// reads from dir is thus either checked or written at this start.
func loadPKI(dir string) (*pki, error) {
	if err := datadir.Ensure(dir); err != nil {
		return nil, err
	}
	p := &pki{dir: dir}
	var err error
	if p.ca, p.caKey, err = p.loadCA(); err != nil {
		return nil, fmt.Errorf("the cluster CA: %w", err)
	}
	p.caPEM = pkiutil.EncodeCertPEM(p.ca)
	if err := p.issueServing(); err != nil {
		return nil, err
	}
	if err := p.loadServiceAccountKey(); err != nil {
		return nil, fmt.Errorf("the service account key: %w", err)
	}
	return p, nil
}

func (p *pki) loadCA() (*x509.Certificate, crypto.Signer, error) {
	certPath, keyPath := p.path(caName)
	key, err := readKey(keyPath)
	if errors.Is(err, os.ErrNotExist) {
		ca, key, err := pkiutil.NewCertificateAuthority(&pkiutil.CertConfig{
			Config:              certutil.Config{CommonName: "kubernetes"},
			EncryptionAlgorithm: keyAlgorithm,
		})
		if err == nil {
			err = p.writePair(caName, ca, key)
		}
		return ca, key, err
	}
	if err != nil {
		return nil, nil, err
	}
	certPEM, err := datadir.ReadFile(certPath)
	if err != nil {
		return nil, nil, err
	}
	certs, err := certutil.ParseCertsPEM(certPEM)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", certPath, err)
	}
	return certs[0], key, nil
}

// loadServiceAccountKey keeps the key that signs service account tokens
// across starts, so that tokens issued before stay valid, and writes its
// public half, which kube-apiserver verifies them with.
func (p *pki) loadServiceAccountKey() error {
	path := filepath.Join(p.dir, saName+".key")
	key, err := readKey(path)
	if errors.Is(err, os.ErrNotExist) {
		if key, err = pkiutil.NewPrivateKey(keyAlgorithm); err == nil {
			err = writeKey(path, key)
		}
	}
	if err != nil {
		return err
	}
	pub, err := pkiutil.EncodePublicKeyPEM(key.Public())
	if err != nil {
		return err
	}
	return datadir.WriteFile(filepath.Join(p.dir, saName+".pub"), pub)
}

// readKey reads a private key of the user's own that nobody else can read.
func readKey(path string) (crypto.Signer, error) {
	b, err := datadir.ReadPrivate(path)
	if err != nil {
		return nil, err
	}
	key, err := keyutil.ParsePrivateKeyPEM(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("%s: a %T cannot sign", path, key)
	}
	return signer, nil
}

func writeKey(path string, key crypto.Signer) error {
	b, err := keyutil.MarshalPrivateKeyToPEM(key)
	if err != nil {
		return err
	}
	return datadir.WriteFile(path, b)
}

// writePair writes name's certificate and key (mode 0600 each).
func (p *pki) writePair(name string, cert *x509.Certificate, key crypto.Signer) error {
	certPath, keyPath := p.path(name)
	if err := datadir.WriteFile(certPath, pkiutil.EncodeCertPEM(cert)); err != nil {
		return err
	}
	return writeKey(keyPath, key)
}

// issueServing makes kube-apiserver's serving pair, for the loopback
// address it listens on and the names of the kubernetes Service.
func (p *pki) issueServing() error {
	cert, key, err := pkiutil.NewCertAndKey(p.ca, p.caKey, &pkiutil.CertConfig{
		Config: certutil.Config{
			CommonName: "kube-apiserver",
			AltNames: certutil.AltNames{
				DNSNames: []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", kubernetesSvc},
				IPs:      []net.IP{net.ParseIP(servingHost), net.ParseIP(kubernetesServiceIP)},
			},
			Usages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		},
		EncryptionAlgorithm: keyAlgorithm,
	})
	if err != nil {
		return fmt.Errorf("kube-apiserver's serving certificate: %w", err)
	}
	return p.writePair(servingName, cert, key)
}

// servingPair issues a serving certificate for the loopback address, as PEM.
func (p *pki) servingPair(name string) (certPEM, keyPEM []byte, err error) {
	return p.pemPair("a serving certificate for "+name, certutil.Config{
		CommonName: name,
		AltNames:   certutil.AltNames{DNSNames: []string{"localhost"}, IPs: []net.IP{net.ParseIP(servingHost)}},
		Usages:     []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	})
}

// clientPair issues a client certificate for user in groups, as PEM.
// Client certificates are made fresh at every start and kept in memory,
// except in the kubeconfigs written for them.
func (p *pki) clientPair(user string, groups []string) (certPEM, keyPEM []byte, err error) {
	return p.pemPair("a client certificate for "+user, certutil.Config{
		CommonName: user, Organization: groups, Usages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
}

// pemPair issues what cfg describes, signed by the CA, as PEM.
func (p *pki) pemPair(what string, cfg certutil.Config) (certPEM, keyPEM []byte, err error) {
	cert, key, err := pkiutil.NewCertAndKey(p.ca, p.caKey, &pkiutil.CertConfig{Config: cfg, EncryptionAlgorithm: keyAlgorithm})
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", what, err)
	}
	if keyPEM, err = keyutil.MarshalPrivateKeyToPEM(key); err != nil {
		return nil, nil, err
	}
	return pkiutil.EncodeCertPEM(cert), keyPEM, nil
}

// path is where name's certificate and key are.
func (p *pki) path(name string) (cert, key string) { return pkiutil.PathsForCertAndKey(p.dir, name) }
