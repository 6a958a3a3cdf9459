package table

import (
	"fmt"
	"sync"
	"sync/atomic"

	"k8s.io/apiextensions-apiserver/pkg/apihelpers"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/conversion"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	schemaobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	structuralpruning "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	"k8s.io/apiextensions-apiserver/pkg/registry/customresource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/storage"
)

// customReading is how kube-apiserver's storage reads a custom resource
// from etcd and serves it in one version (apiextensions-apiserver's
// crdConversionRESTOptionsGetter, whose codec is a versioning codec):
// the stored version's schema coerces (prunes unknown fields and
// non-nullable nulls, repairs metadata) and defaults the object, the
// CRD's converter converts it to the served version, whose schema
// coerces it again. Defaults are the stored version's alone: the codec
// defaults before it converts.
type customReading struct {
	served  schema.GroupVersion
	gk      schema.GroupKind
	schemas map[string]*structuralschema.Structural // by version
	// preserveUnknownFields is the CRD's spec.preserveUnknownFields: no
	// pruning.
	preserveUnknownFields bool
	// converter is the CRD's converter for strategy None; for a webhook it
	// serves the field labels, and converts no version.
	converter runtime.ObjectConvertor
	webhook   bool
	// attrs is the registry's field set: the strategy's GetAttrs.
	attrs storage.AttrFunc

	// unconverted counts objects a webhook would convert, kept in the
	// version stored; unconvertedFrom is one such version.
	unconverted     atomic.Int64
	unconvertedFrom atomic.Value
}

// crConverters is apiextensions-apiserver's factory of CRD converters; no
// webhook is ever called through it.
var crConverters = sync.OnceValues(func() (*conversion.CRConverterFactory, error) {
	return conversion.NewCRConverterFactory(nil, nil)
})

// newCustomReading is how crd's custom resources are read and served in
// version served, with crd's selectable fields of that version (the
// registry's strategy, customresource.NewStrategy, makes the field set).
func newCustomReading(crd *apiextensionsv1.CustomResourceDefinition, served schema.GroupVersionKind) (*customReading, error) {
	cr := &customReading{
		served:                served.GroupVersion(),
		gk:                    served.GroupKind(),
		schemas:               map[string]*structuralschema.Structural{},
		preserveUnknownFields: crd.Spec.PreserveUnknownFields,
		webhook:               crd.Spec.Conversion != nil && crd.Spec.Conversion.Strategy == apiextensionsv1.WebhookConverter,
	}
	var selectable []apiextensionsv1.SelectableField
	for _, v := range crd.Spec.Versions {
		s, err := structuralFor(crd, v.Name)
		if err != nil {
			return nil, fmt.Errorf("CustomResourceDefinition %s version %s: %w", crd.Name, v.Name, err)
		}
		if s != nil {
			cr.schemas[v.Name] = s
		}
		if v.Name == served.Version {
			selectable = v.SelectableFields
		}
	}
	factory, err := crConverters()
	if err != nil {
		return nil, err
	}
	// Field labels and version checks are the same whatever converts.
	none := *crd
	none.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.NoneConverter}
	if _, cr.converter, err = factory.NewConverter(&none); err != nil {
		return nil, err
	}
	// The strategy's field set needs neither validators nor schema.
	cr.attrs = customresource.NewStrategy(nil, crd.Spec.Scope == apiextensionsv1.NamespaceScoped, served, nil, nil, nil, nil, nil, selectable).GetAttrs
	return cr, nil
}

// structuralFor is version's structural schema with its defaults pruned,
// as crdHandler.getOrCreateServingInfoFor makes it; nil when the version
// has none.
func structuralFor(crd *apiextensionsv1.CustomResourceDefinition, version string) (*structuralschema.Structural, error) {
	val, err := apihelpers.GetSchemaForVersion(crd, version)
	if err != nil || val == nil {
		return nil, err
	}
	internal := &apiextensions.CustomResourceValidation{}
	if err := apiextensionsv1.Convert_v1_CustomResourceValidation_To_apiextensions_CustomResourceValidation(val, internal, nil); err != nil {
		return nil, err
	}
	s, err := structuralschema.NewStructural(internal.OpenAPIV3Schema)
	if crd.Spec.PreserveUnknownFields {
		// kube-apiserver serves such a schema without pruning or
		// defaults (it cannot be structural in v1: only in objects
		// stored by apiextensions.k8s.io/v1beta1).
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("the schema is not structural: %w", err)
	}
	s = s.DeepCopy()
	if err := structuraldefaulting.PruneDefaults(s); err != nil {
		return nil, err
	}
	return s, nil
}

// read makes u, as decoded from etcd, what kube-apiserver serves; u is
// changed in place. A version a webhook would convert stays as stored,
// defaulted, and is counted.
func (c *customReading) read(u *unstructured.Unstructured) error {
	stored := u.GroupVersionKind().Version
	if err := c.coerce(u, true); err != nil {
		return err
	}
	structuraldefaulting.Default(u.Object, c.schemas[stored])
	if stored == c.served.Version {
		// The converter would only set the apiVersion it has.
		return c.coerce(u, false)
	}
	if c.webhook {
		// The converter still refuses a version the CRD does not list,
		// before any webhook is called: asked with the object's kind alone.
		kind := &unstructured.Unstructured{Object: map[string]any{"apiVersion": u.GetAPIVersion(), "kind": u.GetKind()}}
		if _, err := c.converter.ConvertToVersion(kind, c.served); err != nil {
			return err
		}
		c.unconverted.Add(1)
		c.unconvertedFrom.CompareAndSwap(nil, stored)
		return nil
	}
	if _, err := c.converter.ConvertToVersion(u, c.served); err != nil {
		return err
	}
	return c.coerce(u, false)
}

// coerce is apiextensions-apiserver's unstructuredSchemaCoercer.apply on
// u with its version's schema: first when decoding from storage (which
// drops malformed metadata and repairs a missing generation), else after
// conversion.
func (c *customReading) coerce(u *unstructured.Unstructured, first bool) error {
	kind, foundKind, err := unstructured.NestedString(u.Object, "kind")
	if err != nil {
		return err
	}
	apiVersion, foundAPIVersion, err := unstructured.NestedString(u.Object, "apiVersion")
	if err != nil {
		return err
	}
	objectMeta, foundMeta, _, err := schemaobjectmeta.GetObjectMetaWithOptions(u.Object, schemaobjectmeta.ObjectMetaOptions{DropMalformedFields: first})
	if err != nil {
		return err
	}
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return err
	}
	if gv.Group == c.gk.Group && kind == c.gk.Kind {
		s := c.schemas[gv.Version]
		if !c.preserveUnknownFields {
			structuralpruning.PruneWithOptions(u.Object, s, true, structuralschema.UnknownFieldPathOptions{})
			structuraldefaulting.PruneNonNullableNullsWithoutDefaults(u.Object, s)
		}
		if ferr, _ := schemaobjectmeta.CoerceWithOptions(nil, u.Object, s, false, schemaobjectmeta.CoerceOptions{DropInvalidFields: first}); ferr != nil {
			return ferr
		}
		if first && foundMeta && objectMeta.Generation == 0 {
			objectMeta.Generation = 1
		}
	}
	if foundKind {
		u.SetKind(kind)
	}
	if foundAPIVersion {
		u.SetAPIVersion(apiVersion)
	}
	if foundMeta {
		return schemaobjectmeta.SetObjectMeta(u.Object, objectMeta)
	}
	return nil
}

// Unconverted says, once listing is done, which objects are not shown as
// kube-apiserver serves them: those stored in another version than the
// served one, which only the CRD's conversion webhook can convert and
// etcdscope does not call. "" when there are none.
func (r *Resource) Unconverted() string {
	if r.custom == nil {
		return ""
	}
	c, err := r.custom()
	if err != nil {
		return ""
	}
	n := c.unconverted.Load()
	if n == 0 {
		return ""
	}
	from, _ := c.unconvertedFrom.Load().(string)
	return fmt.Sprintf("Warning: %d %s shown as stored, in %s (or another stored version), not as served in %s: "+
		"the CustomResourceDefinition converts versions with a webhook, which etcdscope does not call",
		n, schema.GroupResource{Group: r.Group, Resource: r.Resource.Resource}, schema.GroupVersion{Group: r.Group, Version: from}, r.Served.GroupVersion())
}
