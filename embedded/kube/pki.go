package kube

import (
	"crypto"
	"crypto/x509"
	"fmt"
	"net"
	"os"

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

// loadPKI reuses the CA, serving pair and service account key in dir, or
// makes them.
func loadPKI(dir string) (*pki, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create the PKI dir: %w", err)
	}
	p := &pki{dir: dir}
	var err error
	if pkiutil.CertOrKeyExist(dir, caName) {
		p.ca, p.caKey, err = pkiutil.TryLoadCertAndKeyFromDisk(dir, caName)
	} else {
		p.ca, p.caKey, err = pkiutil.NewCertificateAuthority(&pkiutil.CertConfig{
			Config:              certutil.Config{CommonName: "kubernetes"},
			EncryptionAlgorithm: keyAlgorithm,
		})
		if err == nil {
			err = pkiutil.WriteCertAndKey(dir, caName, p.ca, p.caKey)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("the cluster CA: %w", err)
	}
	p.caPEM = pkiutil.EncodeCertPEM(p.ca)
	if !pkiutil.CertOrKeyExist(dir, servingName) {
		if err := p.issueServing(); err != nil {
			return nil, err
		}
	}
	if _, err := pkiutil.TryLoadKeyFromDisk(dir, saName); err != nil {
		key, err := pkiutil.NewPrivateKey(keyAlgorithm)
		if err != nil {
			return nil, err
		}
		if err := pkiutil.WriteKey(dir, saName, key); err != nil {
			return nil, err
		}
		if err := pkiutil.WritePublicKey(dir, saName, key.Public()); err != nil {
			return nil, err
		}
	}
	return p, nil
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
	return pkiutil.WriteCertAndKey(p.dir, servingName, cert, key)
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
