// Package table makes the rows `kubectl get` prints from objects decoded
// from etcd, with the TableConvertor kube-apiserver serves each resource's
// tables with: pkg/printers/internalversion for built-in kinds, the CRD's
// additionalPrinterColumns for custom resources. It matches kubectl's label
// and field selectors as the registries do. It does no I/O.
package table

import (
	"errors"
	"fmt"
	"maps"
	"sync"

	"github.com/etcdscope/etcdscope/decode"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/storage"
)

// Resource makes the table rows of one resource's objects.
type Resource struct {
	decode.Resource
	// Served is the version kubectl is served the objects in: the
	// group's preferred version.
	Served schema.GroupVersionKind
	// scheme converts built-in objects; nil for a custom resource, whose
	// objects stay unstructured.
	scheme *runtime.Scheme
	// custom is how a custom resource is read and served; nil for a
	// built-in one.
	custom     func() (*customReading, error)
	convertor  func() rest.TableConvertor
	printers   bool // convertor is pkg/printers'
	attrs      storage.AttrFunc
	fieldLabel func(label, value string) (string, string, error)

	mu      sync.Mutex
	columns [2][]metav1.TableColumnDefinition // without and with NAMESPACE
}

// Builtin is the table maker of a built-in resource.
func Builtin(res decode.Resource) (*Resource, error) {
	s := schemeFor(res.Group)
	gv, ok := servedVersion(s, res.Group)
	if !ok || res.Kind == "" {
		return nil, fmt.Errorf("%s: no API group version serves it", res.Resource)
	}
	r := &Resource{Resource: res, Served: gv.WithKind(res.Kind), scheme: s}
	r.convertor, r.printers = builtinConvertor(schema.GroupResource{Group: res.Group, Resource: res.Resource})
	r.attrs = attrsFor(res)
	r.fieldLabel = func(label, value string) (string, string, error) {
		return s.ConvertFieldLabel(r.Served, label, value)
	}
	return r, nil
}

// Object is one object of a Resource, as its registry sees it.
type Object struct {
	r *Resource
	// obj is the object as the registry reads it: typed and defaulted in
	// its stored version for a built-in resource; for a custom resource
	// unstructured, coerced, defaulted and in the served version (the
	// stored one when only a webhook converts).
	obj      runtime.Object
	revision int64
}

// Object prepares obj, decoded from the value at modRevision, as
// kube-apiserver's storage decodes it: typed, defaulted
// (versioning.NewDefaultingCodecForScheme); a custom resource pruned and
// defaulted by its CRD's structural schema and converted (customReading).
// obj is consumed: the Object may share its memory, and a custom
// resource's is changed.
func (r *Resource) Object(obj runtime.Object, modRevision int64) (Object, error) {
	if obj == nil {
		return Object{}, errors.New("no object")
	}
	if r.scheme == nil {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return Object{}, fmt.Errorf("a %s is not a custom resource", obj.GetObjectKind().GroupVersionKind().Kind)
		}
		c, err := r.custom()
		if err != nil {
			return Object{}, err
		}
		if err := c.read(u); err != nil {
			return Object{}, err
		}
		return Object{r: r, obj: u, revision: modRevision}, nil
	}
	typed, err := toTyped(r.scheme, obj)
	if err != nil {
		return Object{}, err
	}
	r.scheme.Default(typed)
	return Object{r: r, obj: typed, revision: modRevision}, nil
}

// internal is the object in its internal version, what the registry's
// printers and field sets read; it may share the object's memory.
func (o Object) internal() (runtime.Object, error) {
	if o.r.scheme == nil {
		return o.obj, nil
	}
	gv := o.obj.GetObjectKind().GroupVersionKind().GroupVersion()
	return o.r.scheme.UnsafeConvertToVersion(o.obj, schema.GroupVersion{Group: gv.Group, Version: runtime.APIVersionInternal})
}

// Name is the object's metadata.name.
func (o Object) Name() string {
	if m, err := meta.Accessor(o.obj); err == nil {
		return m.GetName()
	}
	return ""
}

// Served is the object as kubectl is served it, in r.Served's version.
func (o Object) Served() (runtime.Object, error) {
	gvk := o.obj.GetObjectKind().GroupVersionKind()
	if gvk.GroupVersion() == o.r.Served.GroupVersion() {
		return o.obj, nil
	}
	if o.r.scheme != nil {
		in, err := o.internal()
		if err != nil {
			return nil, err
		}
		return o.r.scheme.UnsafeConvertToVersion(in, o.r.Served.GroupVersion())
	}
	// A custom resource is served as read; in its stored version when
	// only a webhook converts (Resource.Unconverted).
	return o.obj, nil
}

// ServedContent is the object as kubectl is served it, unstructured, with
// what dec hides hidden (Secret data, unless shown): what kubectl's
// templates and a --where expression see. It never shares memory Hide
// changes with the object.
func (o Object) ServedContent(dec decode.Decoder) (map[string]any, error) {
	obj, err := o.Served()
	if err != nil {
		return nil, err
	}
	var content map[string]any
	if u, ok := obj.(*unstructured.Unstructured); ok {
		content = maps.Clone(u.Object) // Hide changes the top level only
	} else if content, err = runtime.DefaultUnstructuredConverter.ToUnstructured(obj); err != nil {
		return nil, err
	}
	dec.Hide(o.r.Served, content)
	return content, nil
}

// Column definitions of the two columns Table adds: NAMESPACE as
// cli-runtime's decorateTable defines it, REVISION for the key's
// mod_revision, which is also the object's resourceVersion.
var (
	namespaceColumn = metav1.TableColumnDefinition{Name: "Namespace", Type: "string"}
	revisionColumn  = metav1.TableColumnDefinition{Name: "Revision", Type: "integer",
		Description: "The etcd revision that last modified the key (its mod_revision); the object's resourceVersion."}
)

// Columns are the column definitions of the rows Table made, nil before
// the first: do not change them.
func (r *Resource) Columns(withNamespace bool) []metav1.TableColumnDefinition {
	r.mu.Lock()
	defer r.mu.Unlock()
	if withNamespace {
		return r.columns[1]
	}
	return r.columns[0]
}

// columnsFor is the convertor's columns with the ones Table adds, made
// once per resource.
func (r *Resource) columnsFor(defs []metav1.TableColumnDefinition, withNamespace bool) []metav1.TableColumnDefinition {
	i := 0
	if withNamespace {
		i = 1
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.columns[i] == nil {
		cols := make([]metav1.TableColumnDefinition, 0, len(defs)+2)
		if withNamespace {
			cols = append(cols, namespaceColumn)
		}
		r.columns[i] = append(append(cols, defs...), revisionColumn)
	}
	return r.columns[i]
}
