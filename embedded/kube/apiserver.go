package kube

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/etcdscope/etcdscope/decode"
	"github.com/etcdscope/etcdscope/embedded/datadir"
	"github.com/spf13/pflag"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	apiserverapp "k8s.io/kubernetes/cmd/kube-apiserver/app"
	apiserveroptions "k8s.io/kubernetes/cmd/kube-apiserver/app/options"
)

// The cluster's networks, as kubeadm's defaults have them.
const (
	serviceCIDR         = "10.96.0.0/12"
	kubernetesServiceIP = "10.96.0.1"
	// AdvertiseAddress is the control-plane node's address, which
	// kube-apiserver puts in the kubernetes Service's endpoints: the
	// address of a kind cluster's first node. It serves on 127.0.0.1; the
	// endpoint reconciler refuses a loopback address.
	AdvertiseAddress = "172.18.0.2"
	// serviceAccountIssuer is the iss claim of the tokens it signs.
	serviceAccountIssuer = "https://" + kubernetesSvc
)

// auditPolicy records every request's metadata except reads, which the
// controllers make continuously and which write nothing.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: None
  verbs: [get, list, watch]
- level: Metadata
`

// apiServerFlags are kube-apiserver's command line, as a kubeadm control
// plane node runs it, with the files and ports of this one.
func (c *ControlPlane) apiServerFlags(opts Options) ([]string, error) {
	serveCert, serveKey := c.pki.path(servingName)
	caCert, _ := c.pki.path(caName)
	policy := filepath.Join(c.dir, "audit-policy.yaml")
	if err := datadir.WriteFile(policy, []byte(auditPolicy)); err != nil {
		return nil, err
	}
	// kube-apiserver's audit log (lumberjack) opens the path as it is, a
	// link included: it is checked first, in a dir only this user writes.
	auditLog := filepath.Join(c.dir, "audit.log")
	f, err := datadir.OpenAppend(auditLog)
	if err != nil {
		return nil, err
	}
	f.Close()
	flags := []string{
		"--advertise-address=" + AdvertiseAddress,
		"--bind-address=" + servingHost,
		"--tls-cert-file=" + serveCert,
		"--tls-private-key-file=" + serveKey,
		"--client-ca-file=" + caCert,
		"--authorization-mode=Node,RBAC",
		// The default plugins are on without being named; NodeRestriction
		// is kubeadm's addition.
		"--enable-admission-plugins=NodeRestriction",
		"--allow-privileged=true",
		"--service-cluster-ip-range=" + serviceCIDR,
		"--service-account-issuer=" + serviceAccountIssuer,
		"--service-account-key-file=" + filepath.Join(c.pki.dir, saName+".pub"),
		"--service-account-signing-key-file=" + filepath.Join(c.pki.dir, saName+".key"),
		"--etcd-servers=" + strings.Join(opts.Etcd.Endpoints, ","),
		"--etcd-compaction-interval=" + opts.CompactionInterval.String(),
		"--audit-policy-file=" + policy,
		"--audit-log-path=" + auditLog,
		"--audit-log-maxsize=100",
		"--audit-log-maxbackup=2",
		// The write-path's source: every completed write's event, in
		// batches a tenth of a second apart at most.
		"--audit-webhook-config-file=" + c.auditKubeconfigPath(),
		"--audit-webhook-mode=batch",
		"--audit-webhook-batch-max-wait=100ms",
		"--profiling=false",
	}
	if e := opts.Etcd; e.CA != "" {
		flags = append(flags, "--etcd-cafile="+e.CA, "--etcd-certfile="+e.Cert, "--etcd-keyfile="+e.Key)
	}
	if opts.EncryptionConfig != "" {
		flags = append(flags, "--encryption-provider-config="+opts.EncryptionConfig)
	}
	return flags, nil
}

// runAPIServer builds kube-apiserver from flags, as its command does, on
// listener, with the recorder's admission decorator and innermost handler,
// and serves until ctx ends.
func runAPIServer(ctx context.Context, flags []string, listener net.Listener, r *recorder) error {
	shareStorageClients()
	s := apiserveroptions.NewServerRunOptions()
	reg, err := releaseRegistry()
	if err != nil {
		return err
	}
	s.GenericServerRunOptions.ComponentGlobalsRegistry = reg
	fs := pflag.NewFlagSet("kube-apiserver", pflag.ContinueOnError)
	for _, f := range s.Flags().FlagSets {
		fs.AddFlagSet(f)
	}
	if err := fs.Parse(flags); err != nil {
		return fmt.Errorf("kube-apiserver's flags: %w", err)
	}
	s.SecureServing.Listener = listener
	s.SecureServing.BindPort = listener.Addr().(*net.TCPAddr).Port
	admit := s.Admission.GenericAdmission
	admit.Decorators = append(admission.Decorators{admission.DecoratorFunc(r.recordAdmission)}, admit.Decorators...)
	if err := s.GenericServerRunOptions.ComponentGlobalsRegistry.Set(); err != nil {
		return err
	}
	// Its loopback clients would log the warnings they give themselves.
	rest.SetDefaultWarningHandler(rest.NoWarnings{})
	completed, err := s.Complete(ctx)
	if err != nil {
		return err
	}
	if errs := completed.Validate(); len(errs) != 0 {
		return utilerrors.NewAggregate(errs)
	}
	name, err := cache.NewInformerName("kube-apiserver")
	if err != nil {
		return err
	}
	defer name.Release() // a later start in this process takes the name again
	completed.InformerName = name
	return serve(ctx, completed, r)
}

// serve is kube-apiserver's Run, with the recorder's handler and the
// components' agents innermost in the aggregator's chain, the outermost
// server's, which every request passes.
func serve(ctx context.Context, opts apiserveroptions.CompletedOptions, r *recorder) error {
	config, err := apiserverapp.NewConfig(opts)
	if err != nil {
		return err
	}
	generic := &config.Aggregator.GenericConfig.Config
	generic.BuildHandlerChainFunc = r.recordAnswers(componentAgents(generic.BuildHandlerChainFunc))
	completed, err := config.Complete()
	if err != nil {
		return err
	}
	server, err := apiserverapp.CreateServerChain(completed)
	if err != nil {
		return err
	}
	prepared, err := server.PrepareRun()
	if err != nil {
		return err
	}
	return prepared.Run(ctx)
}

// encryptionOf reads the encryption config kube-apiserver is given, for
// the write path to say which writes it encrypts; nil without one.
func encryptionOf(path string) (*decode.Encryption, error) {
	if path == "" {
		return nil, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("encryption config: %w", err)
	}
	e, err := decode.ParseEncryptionConfig(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return e, nil
}
