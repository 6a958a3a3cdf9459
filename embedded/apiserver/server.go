package apiserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/etcdscope/etcdscope/decode"
	"github.com/etcdscope/etcdscope/embedded/fanout"
	"github.com/go-logr/logr/funcr"
	clientv3 "go.etcd.io/etcd/client/v3"
	etcdkube "go.etcd.io/etcd/client/v3/kubernetes"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	apimachineryversion "k8s.io/apimachinery/pkg/version"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	openapinamer "k8s.io/apiserver/pkg/endpoints/openapi"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	genericoptions "k8s.io/apiserver/pkg/server/options"
	"k8s.io/apiserver/pkg/server/options/encryptionconfig"
	serverstorage "k8s.io/apiserver/pkg/server/storage"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/apiserver/pkg/storage/value"
	utilopenapi "k8s.io/apiserver/pkg/util/openapi"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	restclient "k8s.io/client-go/rest"
	certutil "k8s.io/client-go/util/cert"
	basecompatibility "k8s.io/component-base/compatibility"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	generatedopenapi "k8s.io/kubernetes/pkg/generated/openapi"
	"k8s.io/kubernetes/pkg/kubeapiserver"

	// The API groups the server serves, registered in legacyscheme as in
	// kube-apiserver (pkg/controlplane/import_known_versions.go).
	_ "k8s.io/kubernetes/pkg/apis/apps/install"
	_ "k8s.io/kubernetes/pkg/apis/autoscaling/install"
	_ "k8s.io/kubernetes/pkg/apis/batch/install"
	_ "k8s.io/kubernetes/pkg/apis/coordination/install"
	_ "k8s.io/kubernetes/pkg/apis/core/install"
	_ "k8s.io/kubernetes/pkg/apis/discovery/install"
	_ "k8s.io/kubernetes/pkg/apis/events/install"
	_ "k8s.io/kubernetes/pkg/apis/policy/install"
	_ "k8s.io/kubernetes/pkg/apis/rbac/install"
	_ "k8s.io/kubernetes/pkg/apis/storage/install"
)

// StorageMediaType is how values are encoded in etcd, kube-apiserver's default.
const StorageMediaType = "application/vnd.kubernetes.protobuf"

// MaxRequestBodyBytes is kube-apiserver's limit on a request body; larger
// bodies get 413 RequestEntityTooLarge.
const MaxRequestBodyBytes = 3 * 1024 * 1024

// Options configures a server.
type Options struct {
	// Etcd reaches the etcd cluster to store into. Its Logger, when nil,
	// is replaced by one that discards.
	Etcd clientv3.Config
	// Prefix is the key prefix of every object; empty means
	// decode.DefaultPrefix, kube-apiserver's default.
	Prefix string
	// Address is the host:port to serve HTTPS on; empty means a free port
	// on 127.0.0.1.
	Address string
	// Tokens are the bearer tokens accepted, besides those of TokenFile.
	// With neither, the server makes an admin and a viewer token.
	Tokens []Token
	// TokenFile is a kube-apiserver --token-auth-file (CSV of
	// token,user,uid,"group1,group2").
	TokenFile string
	// EncryptionConfig is a kube-apiserver --encryption-provider-config
	// file (apiserver.config.k8s.io EncryptionConfiguration); empty stores
	// values unencrypted.
	EncryptionConfig string
	// Log receives the server's logs (klog's, which is process-wide: the
	// last server started sets it). Nil discards them. Nothing is ever
	// written to the terminal.
	Log io.Writer
}

// Server is a running API server.
type Server struct {
	url    string
	caPEM  []byte
	tokens []Token
	writes fanout.Hub[WriteTrace]

	etcd      *etcdkube.Client
	informers informers.SharedInformerFactory
	storage   *restOptions
	cancel    context.CancelFunc
	// stopped closes when the server stops serving; runErr is why.
	stopped chan struct{}
	runErr  error
	// controllersDone closes when the in-process controllers have stopped.
	controllersDone <-chan struct{}
	closeOnce       sync.Once
	closeErr        error
}

// Start starts a server and returns once it serves; ctx bounds the start
// only. Close stops it.
func Start(ctx context.Context, opts Options) (*Server, error) {
	redirectLogs(opts.Log)
	opts, tokens, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	s := &Server{tokens: tokens, stopped: make(chan struct{})}
	ok := false
	c := genericapiserver.NewConfig(legacyscheme.Codecs)
	defer func() {
		if !ok {
			if s.cancel == nil && c.SecureServing != nil { // never served: the listener is still ours
				c.SecureServing.Listener.Close()
			}
			s.Close()
		}
	}()
	if s.etcd, err = etcdkube.New(opts.Etcd); err != nil {
		return nil, fmt.Errorf("etcd client: %w", err)
	}

	configureServing(c)
	if err := s.serveOn(c, opts.Address); err != nil {
		return nil, err
	}
	c.Authentication.Authenticator = newAuthenticator(tokens)
	c.Authorization.Authorizer = authorizer.AuthorizerFunc(authorizeByGroup)
	genericapiserver.AuthorizeClientBearerToken(c.LoopbackClientConfig, &c.Authentication, &c.Authorization)

	client, err := kubernetes.NewForConfig(c.LoopbackClientConfig)
	if err != nil {
		return nil, err
	}
	s.informers = informers.NewSharedInformerFactory(client, 10*time.Minute)
	if c.AdmissionControl, err = newAdmission(client, s.informers); err != nil {
		return nil, err
	}
	c.BuildHandlerChainFunc = func(h http.Handler, c *genericapiserver.Config) http.Handler {
		return withWriteTrace(genericapiserver.DefaultBuildHandlerChain(h, c), &s.writes)
	}

	factory, err := s.openStorage(ctx, opts)
	if err != nil {
		return nil, err
	}
	c.RESTOptionsGetter = s.storage

	gs, err := c.Complete(s.informers).New("etcdscope-apiserver", genericapiserver.NewEmptyDelegate())
	if err != nil {
		return nil, err
	}
	alloc, err := installAPIs(gs, factory, s.storage, c.LoopbackClientConfig, s.informers, c.Authorization.Authorizer)
	if err != nil {
		gs.Destroy()
		return nil, err
	}
	prepared := gs.PrepareRun()
	runCtx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	go func() {
		s.runErr = prepared.RunWithContext(runCtx)
		close(s.stopped)
	}()

	if err := s.waitReady(ctx, client); err != nil {
		return nil, err
	}
	if err := alloc.restore(ctx, client); err != nil {
		return nil, err
	}
	if err := ensureNamespaces(ctx, client); err != nil {
		return nil, err
	}
	if s.controllersDone, err = s.startNamespaceController(runCtx, c.LoopbackClientConfig); err != nil {
		return nil, err
	}
	ok = true
	return s, nil
}

// withDefaults fills in what opts leaves out, and gathers the tokens the
// server accepts.
func (opts Options) withDefaults() (Options, []Token, error) {
	if opts.Prefix == "" {
		opts.Prefix = decode.DefaultPrefix
	}
	tokens := append([]Token(nil), opts.Tokens...)
	if opts.TokenFile != "" {
		fromFile, err := readTokenFile(opts.TokenFile)
		if err != nil {
			return opts, nil, err
		}
		tokens = append(tokens, fromFile...)
	}
	if len(tokens) == 0 {
		tokens = defaultTokens()
	}
	if opts.Etcd.Logger == nil {
		opts.Etcd.Logger = zap.NewNop()
	}
	if opts.Etcd.DialTimeout == 0 {
		opts.Etcd.DialTimeout = 20 * time.Second
	}
	return opts, tokens, nil
}

// configureServing sets what kube-apiserver serves beside the APIs: the
// version, the OpenAPI documents, the body limit, the shutdown of watches.
func configureServing(c *genericapiserver.Config) {
	c.EffectiveVersion = versionInfo{basecompatibility.NewEffectiveVersionFromString(decode.KubernetesVersion[1:], "", "")}
	namer := openapinamer.NewDefinitionNamer(legacyscheme.Scheme)
	defs := utilopenapi.GetOpenAPIDefinitionsWithoutDisabledFeatures(generatedopenapi.GetOpenAPIDefinitions)
	c.OpenAPIConfig = genericapiserver.DefaultOpenAPIConfig(defs, namer)
	c.OpenAPIConfig.Info.Title = "Kubernetes"
	c.OpenAPIV3Config = genericapiserver.DefaultOpenAPIV3Config(defs, namer)
	c.OpenAPIV3Config.Info.Title = "Kubernetes"
	c.MaxRequestBodyBytes = MaxRequestBodyBytes
	// On Close, end open watches (kube-apiserver's
	// --shutdown-watch-termination-grace-period) instead of letting them
	// hold the shutdown for the full request timeout.
	c.ShutdownWatchTerminationGracePeriod = 2 * time.Second
}

// serveOn listens on address (a free loopback port if empty) with a fresh
// self-signed serving certificate, and sets up the loopback client.
func (s *Server) serveOn(c *genericapiserver.Config, address string) error {
	if address == "" {
		address = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", address)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", address, err)
	}
	addr := ln.Addr().(*net.TCPAddr)
	host := addr.IP.String()
	cert, key, err := certutil.GenerateSelfSignedCertKey(host, []net.IP{addr.IP, net.IPv4(127, 0, 0, 1)}, []string{"localhost"})
	if err != nil {
		ln.Close()
		return fmt.Errorf("serving certificate: %w", err)
	}
	secure := genericoptions.NewSecureServingOptions()
	secure.Listener = ln
	secure.BindAddress = addr.IP
	secure.BindPort = addr.Port
	if secure.ServerCert.GeneratedCert, err = dynamiccertificates.NewStaticCertKeyContent("serving-cert", cert, key); err != nil {
		ln.Close()
		return err
	}
	if err := secure.WithLoopback().ApplyTo(&c.SecureServing, &c.LoopbackClientConfig); err != nil {
		ln.Close()
		return err
	}
	c.ExternalAddress = net.JoinHostPort(host, strconv.Itoa(addr.Port))
	s.url = "https://" + c.ExternalAddress
	s.caPEM = cert
	return nil
}

// openStorage is kube-apiserver's storage on s.etcd: the storage factory
// and, with an EncryptionConfiguration, the transformers of its providers.
func (s *Server) openStorage(ctx context.Context, opts Options) (*serverstorage.DefaultStorageFactory, error) {
	factory, err := storageFactory(opts.Prefix)
	if err != nil {
		return nil, err
	}
	s.storage = &restOptions{factory: factory, client: s.etcd}
	if opts.EncryptionConfig != "" {
		if s.storage.transformers, err = loadEncryption(ctx, opts.EncryptionConfig); err != nil {
			return nil, err
		}
	}
	return factory, nil
}

// storageFactory is kube-apiserver's: storage versions, key prefixes
// (minions, services/specs, ...) and cohabiting resources.
func storageFactory(prefix string) (*serverstorage.DefaultStorageFactory, error) {
	etcdOpts := genericoptions.NewEtcdOptions(storagebackend.NewDefaultConfig(prefix, nil))
	etcdOpts.DefaultStorageMediaType = StorageMediaType
	cfg := kubeapiserver.NewStorageFactoryConfigEffectiveVersion(basecompatibility.NewEffectiveVersionFromString(decode.KubernetesVersion[1:], "", ""))
	cfg.APIResourceConfig = resourceConfig()
	return cfg.Complete(etcdOpts).New()
}

// loadEncryption reads an EncryptionConfiguration as kube-apiserver's
// --encryption-provider-config does (aescbc, aesgcm, secretbox, identity).
func loadEncryption(ctx context.Context, path string) (map[schema.GroupResource]value.Transformer, error) {
	ec, err := encryptionconfig.LoadEncryptionConfig(ctx, path, false, "etcdscope")
	if err != nil {
		return nil, fmt.Errorf("encryption config %s: %w", path, err)
	}
	return ec.Transformers, nil
}

func (s *Server) waitReady(ctx context.Context, client kubernetes.Interface) error {
	var last error
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		select {
		case <-s.stopped:
			return false, fmt.Errorf("server stopped while starting: %w", s.runErr)
		default:
		}
		_, last = client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		return last == nil, nil
	})
	if err != nil && last != nil {
		return fmt.Errorf("waiting for the API server to be ready: %w (last: %v)", err, last)
	}
	return err
}

// ensureNamespaces creates the namespaces kube-apiserver's system namespaces
// controller creates.
func ensureNamespaces(ctx context.Context, client kubernetes.Interface) error {
	for _, name := range systemNamespaces {
		_, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create namespace %s: %w", name, err)
		}
	}
	return nil
}

// URL is the https:// address the server serves on.
func (s *Server) URL() string { return s.url }

// CAData is the PEM certificate that the serving certificate chains to.
func (s *Server) CAData() []byte { return s.caPEM }

// Tokens are the bearer tokens the server accepts.
func (s *Server) Tokens() []Token { return append([]Token(nil), s.tokens...) }

// AdminToken is the token of the first identity in AdminGroup, or "".
func (s *Server) AdminToken() string { return s.tokenOf(AdminGroup) }

// ViewerToken is the token of the first identity in ViewerGroup, or "".
func (s *Server) ViewerToken() string { return s.tokenOf(ViewerGroup) }

func (s *Server) tokenOf(group string) string {
	for _, t := range s.tokens {
		for _, g := range t.Groups {
			if g == group {
				return t.Token
			}
		}
	}
	return ""
}

// RESTConfig is a client-go configuration for the server with the given
// bearer token.
func (s *Server) RESTConfig(token string) *restclient.Config {
	return &restclient.Config{
		Host:            s.url,
		BearerToken:     token,
		TLSClientConfig: restclient.TLSClientConfig{CAData: s.caPEM},
		QPS:             -1, // no client-side throttling
		// Protobuf, as kube-controller-manager, kube-scheduler and the
		// kubelet talk to kube-apiserver (--kube-api-content-type).
		ContentConfig: restclient.ContentConfig{
			ContentType:        "application/vnd.kubernetes.protobuf",
			AcceptContentTypes: "application/vnd.kubernetes.protobuf,application/json",
		},
	}
}

// Writes publishes a trace of each write request (create, update, patch,
// delete) as it completes. A subscriber that falls behind misses traces:
// the server never waits for one. Close ends every subscription.
func (s *Server) Writes() *fanout.Hub[WriteTrace] { return &s.writes }

// Stopped closes when the server stops serving: after Close, or on its own
// when serving fails, which Err then says.
func (s *Server) Stopped() <-chan struct{} { return s.stopped }

// Err is why the server stopped serving on its own: nil while it serves
// and after a Close that ended it.
func (s *Server) Err() error {
	select {
	case <-s.stopped:
		if errors.Is(s.runErr, context.Canceled) {
			return nil
		}
		return s.runErr
	default:
		return nil
	}
}

// Close stops the server: it stops accepting requests, ends watches,
// stops the watch caches and informers, and closes the etcd client.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		if s.cancel != nil {
			s.cancel()
			<-s.stopped
			s.closeErr = s.Err()
		}
		s.release()
	})
	return s.closeErr
}

// release frees what Start acquired, in reverse order.
func (s *Server) release() {
	if s.cancel != nil {
		s.cancel()
	}
	if s.controllersDone != nil {
		<-s.controllersDone
	}
	if s.informers != nil {
		s.informers.Shutdown()
	}
	if s.storage != nil {
		s.storage.destroy()
	}
	if s.etcd != nil {
		_ = s.etcd.Close()
	}
	s.writes.Close()
}

// versionInfo makes /version report decode.KubernetesVersion as gitVersion: the
// build of this binary does not stamp component-base/version as
// Kubernetes' release builds do.
type versionInfo struct {
	basecompatibility.EffectiveVersion
}

func (v versionInfo) Info() *apimachineryversion.Info {
	info := v.EffectiveVersion.Info()
	info.GitVersion = decode.KubernetesVersion
	info.GitTreeState = "clean"
	return info
}

// klogTarget is where klog (the apiserver libraries' logger) writes: the
// log of the last server started. With a logr backend set, klog writes
// nothing itself, not even the errors it otherwise copies to stderr. The
// backend is set once, at init: klog.SetLogger is not safe while anything
// logs, and the gRPC goroutines of a closed server's etcd client may still
// log through klog (k8s.io/apiserver's etcd3 package routes gRPC's logs
// there) when the next server starts.
var klogTarget struct {
	sync.Mutex
	w io.Writer
}

func init() {
	klogTarget.w = io.Discard
	klog.SetLogger(funcr.New(func(prefix, args string) {
		klogTarget.Lock()
		defer klogTarget.Unlock()
		fmt.Fprintln(klogTarget.w, time.Now().Format(time.RFC3339Nano), prefix, args)
	}, funcr.Options{}))
}

// redirectLogs sends klog to w, and never to the terminal.
func redirectLogs(w io.Writer) {
	if w == nil {
		w = io.Discard
	}
	klogTarget.Lock()
	defer klogTarget.Unlock()
	klogTarget.w = w
}
