package kube

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"time"

	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// auditSink receives kube-apiserver's audit events through its webhook
// backend, on a loopback port of its own, and hands the completed
// requests to the recorder. Only kube-apiserver, with the client
// certificate in the webhook's kubeconfig, may post to it.
type auditSink struct {
	server   *http.Server
	listener net.Listener
	r        *recorder
}

// maxAuditBatch bounds one posted batch; kube-apiserver's batches are at
// most 400 events of Metadata level.
const maxAuditBatch = 64 << 20

const auditWebhookUser = "kube-apiserver-audit"

// startAuditSink serves the webhook and writes the kubeconfig
// kube-apiserver's --audit-webhook-config-file names.
func (c *ControlPlane) startAuditSink(r *recorder) (*auditSink, error) {
	certPEM, keyPEM, err := c.pki.servingPair("etcdscope-audit-sink")
	if err != nil {
		return nil, err
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AddCert(c.pki.ca)
	l, err := net.Listen("tcp", net.JoinHostPort(servingHost, "0"))
	if err != nil {
		return nil, fmt.Errorf("the audit sink's port: %w", err)
	}
	s := &auditSink{listener: l, r: r}
	s.server = &http.Server{
		Handler:           http.HandlerFunc(s.serve),
		ReadHeaderTimeout: 10 * time.Second,
		TLSConfig:         &tls.Config{Certificates: []tls.Certificate{pair}, ClientCAs: pool, ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS12},
	}
	if err := c.writeAuditKubeconfig("https://" + l.Addr().String() + "/audit"); err != nil {
		l.Close()
		return nil, err
	}
	go s.server.ServeTLS(l, "", "")
	return s, nil
}

func (s *auditSink) serve(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodPost {
		http.Error(w, "POST audit events", http.StatusMethodNotAllowed)
		return
	}
	var list auditv1.EventList
	if err := json.NewDecoder(io.LimitReader(req.Body, maxAuditBatch)).Decode(&list); err != nil {
		http.Error(w, "not an audit.k8s.io/v1 EventList: "+err.Error(), http.StatusBadRequest)
		return
	}
	for i := range list.Items {
		if ev := &list.Items[i]; ev.Stage == auditv1.StageResponseComplete || ev.Stage == auditv1.StagePanic {
			s.r.audited(ev)
		}
	}
	w.WriteHeader(http.StatusOK)
}

func (s *auditSink) close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := s.server.Shutdown(ctx)
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// auditKubeconfigPath is the webhook backend's kubeconfig.
func (c *ControlPlane) auditKubeconfigPath() string {
	return filepath.Join(c.dir, "audit-webhook.conf")
}

// writeAuditKubeconfig points kube-apiserver's audit webhook at server,
// with a client certificate the sink requires.
func (c *ControlPlane) writeAuditKubeconfig(server string) error {
	certPEM, keyPEM, err := c.pki.clientPair(auditWebhookUser, nil)
	if err != nil {
		return err
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["sink"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: c.pki.caPEM}
	cfg.AuthInfos["kube-apiserver"] = &clientcmdapi.AuthInfo{ClientCertificateData: certPEM, ClientKeyData: keyPEM}
	cfg.Contexts["sink"] = &clientcmdapi.Context{Cluster: "sink", AuthInfo: "kube-apiserver"}
	cfg.CurrentContext = "sink"
	return writeKubeconfigFile(cfg, c.auditKubeconfigPath())
}
