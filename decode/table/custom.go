package table

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/etcdscope/etcdscope/decode"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	crtable "k8s.io/apiextensions-apiserver/pkg/registry/customresource/tableconvertor"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/apiserver/pkg/registry/rest"
)

// Custom is the table maker of the custom resource a
// CustomResourceDefinition defines, crd as decoded from etcd.
func Custom(crd runtime.Object) (*Resource, error) {
	def, err := internalCRD(crd)
	if err != nil {
		return nil, fmt.Errorf("the CustomResourceDefinition does not convert: %w", err)
	}
	served := servedCustomVersion(def)
	if served == "" {
		return nil, fmt.Errorf("CustomResourceDefinition %s serves no version", def.Name)
	}
	names := acceptedNames(def)
	r := &Resource{
		Resource: decode.Resource{
			Group:         def.Spec.Group,
			Resource:      names.Plural,
			Kind:          names.Kind,
			StoragePrefix: def.Spec.Group + "/" + names.Plural,
			Namespaced:    def.Spec.Scope == apiextensions.NamespaceScoped,
			ShortNames:    names.ShortNames,
		},
	}
	r.Served = schema.GroupVersionKind{Group: r.Group, Version: served, Kind: r.Kind}
	c, err := customConvertor(def, served)
	if err != nil {
		return nil, err
	}
	r.convertor = func() rest.TableConvertor { return c }
	v1def := &apiextensionsv1.CustomResourceDefinition{}
	if err := apiextensionsScheme().Convert(def, v1def, nil); err != nil {
		return nil, fmt.Errorf("CustomResourceDefinition %s: %w", def.Name, err)
	}
	// Made when first needed: get reads every definition to find one.
	r.custom = sync.OnceValues(func() (*customReading, error) { return newCustomReading(v1def, r.Served) })
	r.attrs = func(obj runtime.Object) (labels.Set, fields.Set, error) {
		c, err := r.custom()
		if err != nil {
			return nil, nil, err
		}
		return c.attrs(obj)
	}
	r.fieldLabel = func(label, value string) (string, string, error) {
		c, err := r.custom()
		if err != nil {
			return "", "", err
		}
		return c.converter.ConvertFieldLabel(r.Served, label, value)
	}
	return r, nil
}

// internalCRD is crd as apiextensions-apiserver's registry reads it.
func internalCRD(crd runtime.Object) (*apiextensions.CustomResourceDefinition, error) {
	res, _ := decode.LookupResource("customresourcedefinitions.apiextensions.k8s.io")
	crds, err := Builtin(res)
	if err != nil {
		return nil, err
	}
	o, err := crds.Object(crd, 0)
	if err != nil {
		return nil, err
	}
	in, err := o.internal()
	if err != nil {
		return nil, err
	}
	def, ok := in.(*apiextensions.CustomResourceDefinition)
	if !ok {
		return nil, fmt.Errorf("a %T is no CustomResourceDefinition", in)
	}
	return def, nil
}

// Names are the names kubectl resolves to r: plural, singular, kind and
// short names, lower-cased, and the first three with ".group".
func (r *Resource) Names() []string {
	singular := strings.ToLower(r.Kind)
	names := []string{r.Resource.Resource, singular}
	for _, n := range names[:2] {
		names = append(names, n+"."+r.Group)
	}
	for _, n := range r.ShortNames {
		names = append(names, strings.ToLower(n))
	}
	return names
}

// acceptedNames are the names kube-apiserver serves and stores the custom
// resource under: the CRD's status.acceptedNames (the discovery and
// storage prefix of apiextensions-apiserver), spec.names until the naming
// controller has accepted them.
func acceptedNames(def *apiextensions.CustomResourceDefinition) apiextensions.CustomResourceDefinitionNames {
	if def.Status.AcceptedNames.Plural != "" {
		return def.Status.AcceptedNames
	}
	return def.Spec.Names
}

// servedCustomVersion is the preferred version of the CRD's served ones,
// as apiextensions-apiserver's discovery sorts them
// (version.CompareKubeAwareVersionStrings, highest first).
func servedCustomVersion(def *apiextensions.CustomResourceDefinition) string {
	var served []string
	for _, v := range def.Spec.Versions {
		if v.Served {
			served = append(served, v.Name)
		}
	}
	slices.SortStableFunc(served, func(a, b string) int { return -version.CompareKubeAwareVersionStrings(a, b) })
	if len(served) == 0 {
		return ""
	}
	return served[0]
}

// customConvertor is the TableConvertor apiextensions-apiserver serves
// the version's tables with: its printer columns, or AGE when it has none
// (apiextensions.GetColumnsForVersion).
func customConvertor(def *apiextensions.CustomResourceDefinition, served string) (rest.TableConvertor, error) {
	cols, err := apiextensions.GetColumnsForVersion(def, served)
	if err != nil {
		return nil, err
	}
	v1cols := make([]apiextensionsv1.CustomResourceColumnDefinition, len(cols))
	for i := range cols {
		if err := apiextensionsv1.Convert_apiextensions_CustomResourceColumnDefinition_To_v1_CustomResourceColumnDefinition(&cols[i], &v1cols[i], nil); err != nil {
			return nil, err
		}
	}
	c, err := crtable.New(v1cols)
	if err != nil {
		return nil, fmt.Errorf("CustomResourceDefinition %s: %w", def.Name, err)
	}
	return c, nil
}
