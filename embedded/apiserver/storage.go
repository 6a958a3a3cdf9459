package apiserver

import (
	"context"
	"fmt"
	"path"
	"strconv"
	"sync"
	"time"

	"go.etcd.io/etcd/client/v3/kubernetes"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/registry/generic"
	serverstorage "k8s.io/apiserver/pkg/server/storage"
	"k8s.io/apiserver/pkg/storage"
	cacherstorage "k8s.io/apiserver/pkg/storage/cacher"
	"k8s.io/apiserver/pkg/storage/etcd3"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/apiserver/pkg/storage/storagebackend/factory"
	"k8s.io/apiserver/pkg/storage/value"
	"k8s.io/apiserver/pkg/storage/value/encrypt/identity"
	"k8s.io/client-go/tools/cache"
)

// restOptions hands every registry the storage kube-apiserver would give it:
// the storage version, codec and key prefix come from the real storage
// factory (k8s.io/kubernetes/pkg/kubeapiserver), values go through the
// configured encryption transformers, and the storage.Interface is
// k8s.io/apiserver's etcd3 store behind its watch cache, as in
// StorageFactoryRestOptionsFactory with --watch-cache. The differences: one
// etcd client shared by every resource instead of one per resource, no
// compactor (etcdscope wants the history), and a tracing wrapper.
type restOptions struct {
	factory      *serverstorage.DefaultStorageFactory
	client       *kubernetes.Client
	transformers map[schema.GroupResource]value.Transformer

	mu       sync.Mutex
	destroys []factory.DestroyFunc
}

// uncachedResources are those kube-apiserver serves without a watch cache
// (kubeapiserver.DefaultWatchCacheSizes).
var uncachedResources = map[schema.GroupResource]bool{
	{Resource: "events"}:                         true,
	{Group: "events.k8s.io", Resource: "events"}: true,
}

func (o *restOptions) GetRESTOptions(resource schema.GroupResource, example runtime.Object) (generic.RESTOptions, error) {
	cfg, err := o.factory.NewConfig(resource, example)
	if err != nil {
		return generic.RESTOptions{}, fmt.Errorf("storage config for %v: %w", resource, err)
	}
	if t, ok := o.transformers[resource]; ok {
		cfg.Transformer = t
	}
	return generic.RESTOptions{
		StorageConfig:           cfg,
		Decorator:               o.decorate(!uncachedResources[resource]),
		DeleteCollectionWorkers: 1,
		// No garbage collector runs here: with it enabled, a foreground
		// delete would wait forever for one.
		EnableGarbageCollection: false,
		ResourcePrefix:          o.factory.ResourcePrefix(resource),
	}, nil
}

func (o *restOptions) decorate(cached bool) generic.StorageDecorator {
	return func(cfg *storagebackend.ConfigForResource, resourcePrefix string, keyFunc func(runtime.Object) (string, error),
		newFunc, newListFunc func() runtime.Object, getAttrs storage.AttrFunc, triggers storage.IndexerFuncs, indexers *cache.Indexers,
	) (storage.Interface, factory.DestroyFunc, error) {
		transformer := cfg.Transformer
		if transformer == nil {
			transformer = identity.NewEncryptCheckTransformer()
		}
		versioner := storage.APIObjectVersioner{}
		raw, err := etcd3.New(o.client, nil, cfg.Codec, newFunc, newListFunc, cfg.Prefix, resourcePrefix, cfg.GroupResource,
			tracingTransformer{transformer}, cfg.LeaseManagerConfig, etcd3.NewDefaultDecoder(cfg.Codec, versioner), versioner)
		if err != nil {
			return nil, nil, err
		}
		var s storage.Interface = tracingStorage{Interface: raw, prefix: cfg.Prefix}
		stop := raw.Close
		if cached {
			cacher, err := cacherstorage.NewCacherFromConfig(cacherstorage.Config{
				Storage:             s,
				Versioner:           versioner,
				GroupResource:       cfg.GroupResource,
				EventsHistoryWindow: cfg.EventsHistoryWindow,
				ResourcePrefix:      resourcePrefix,
				KeyFunc:             keyFunc,
				NewFunc:             newFunc,
				NewListFunc:         newListFunc,
				GetAttrsFunc:        getAttrs,
				IndexerFuncs:        triggers,
				Indexers:            indexers,
				Codec:               cfg.Codec,
			})
			if err != nil {
				raw.Close()
				return nil, nil, err
			}
			delegator := cacherstorage.NewCacheDelegator(cacher, s)
			s = delegator
			stop = func() {
				delegator.Stop()
				cacher.Stop()
				raw.Close()
			}
		}
		// Registries share one storage between a resource and its
		// subresources and call destroy for each: stop once.
		destroy := sync.OnceFunc(stop)
		o.mu.Lock()
		o.destroys = append(o.destroys, destroy)
		o.mu.Unlock()
		return s, destroy, nil
	}
}

// destroy stops every storage handed out; GenericAPIServer.Destroy does the
// same for the storages it installed, this covers any it did not.
func (o *restOptions) destroy() {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, d := range o.destroys {
		d()
	}
	o.destroys = nil
}

// tracingStorage marks where writes enter and leave storage.Interface.
type tracingStorage struct {
	storage.Interface
	prefix string
}

func (s tracingStorage) begin(ctx context.Context, key string) *traceRecorder {
	r := recorderFrom(ctx)
	r.update(func(r *traceRecorder) {
		r.t.Key = path.Join("/", s.prefix, key)
		r.storageStart = time.Now()
	})
	return r
}

func (s tracingStorage) end(r *traceRecorder, out runtime.Object, err error) {
	r.update(func(r *traceRecorder) {
		start := r.transformStart // encryption counts as part of the write to etcd
		if start.IsZero() {       // a delete encodes nothing
			start = r.storageStart
		}
		r.t.Stages = append(r.t.Stages, Stage{StageEtcd, time.Since(start)})
		if err != nil {
			return
		}
		if a, aerr := meta.Accessor(out); aerr == nil {
			r.t.Revision, _ = strconv.ParseInt(a.GetResourceVersion(), 10, 64)
			if r.t.Name == "" { // a create names its object in the body
				r.t.Name = a.GetName()
			}
		}
	})
}

func (s tracingStorage) Create(ctx context.Context, key string, obj, out runtime.Object, ttl uint64) error {
	r := s.begin(ctx, key)
	err := s.Interface.Create(ctx, key, obj, out, ttl)
	s.end(r, out, err)
	return err
}

func (s tracingStorage) Delete(ctx context.Context, key string, out runtime.Object, preconditions *storage.Preconditions,
	validateDeletion storage.ValidateObjectFunc, cachedExistingObject runtime.Object, opts storage.DeleteOptions,
) error {
	r := s.begin(ctx, key)
	err := s.Interface.Delete(ctx, key, out, preconditions, validateDeletion, cachedExistingObject, opts)
	s.end(r, out, err)
	return err
}

func (s tracingStorage) GuaranteedUpdate(ctx context.Context, key string, destination runtime.Object, ignoreNotFound bool,
	preconditions *storage.Preconditions, tryUpdate storage.UpdateFunc, cachedExistingObject runtime.Object,
) error {
	r := s.begin(ctx, key)
	traced := func(input runtime.Object, res storage.ResponseMeta) (runtime.Object, *uint64, error) {
		out, ttl, err := tryUpdate(input, res)
		r.update(func(r *traceRecorder) { r.tryUpdateEnd = time.Now() })
		return out, ttl, err
	}
	err := s.Interface.GuaranteedUpdate(ctx, key, destination, ignoreNotFound, preconditions, traced, cachedExistingObject)
	s.end(r, destination, err)
	return err
}

// tracingTransformer sees the encoded value on its way to etcd: its size
// before and after encryption, and when encoding ended.
type tracingTransformer struct{ value.Transformer }

func (t tracingTransformer) TransformToStorage(ctx context.Context, data []byte, dataCtx value.Context) ([]byte, error) {
	r := recorderFrom(ctx)
	r.update(func(r *traceRecorder) {
		r.transformStart = time.Now()
		r.t.EncodedBytes = len(data)
	})
	out, err := t.Transformer.TransformToStorage(ctx, data, dataCtx)
	r.update(func(r *traceRecorder) { r.t.StoredBytes = len(out) })
	return out, err
}
