package table

import (
	"sync"

	crdtable "k8s.io/apiextensions-apiserver/pkg/registry/customresourcedefinition/tableconvertor"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/registry/rest"
	apiserviceregistry "k8s.io/kube-aggregator/pkg/registry/apiservice/etcd"
	"k8s.io/kubernetes/pkg/printers"
	printersinternal "k8s.io/kubernetes/pkg/printers/internalversion"
	printerstorage "k8s.io/kubernetes/pkg/printers/storage"
)

// printerConvertor is the TableConvertor almost every registry of
// kube-apiserver sets (pkg/registry/*/storage): the printers of
// pkg/printers/internalversion over internal types.
var printerConvertor = sync.OnceValue(func() rest.TableConvertor {
	return printerstorage.TableConvertor{TableGenerator: printers.NewTableGenerator().With(printersinternal.AddHandlers)}
})

// defaultConvertorResources are the registries that set
// rest.NewDefaultTableConvertor (NAME, CREATED AT) instead, although
// pkg/printers may have a handler for the type (CSIStorageCapacity has).
var defaultConvertorResources = map[schema.GroupResource]bool{
	{Group: "storage.k8s.io", Resource: "csistoragecapacities"}:    true,
	{Group: "rbac.authorization.k8s.io", Resource: "roles"}:        true,
	{Group: "rbac.authorization.k8s.io", Resource: "clusterroles"}: true,
	{Resource: "limitranges"}:                                      true,
}

// builtinConvertor is the TableConvertor kube-apiserver serves gr's tables
// with, from internal objects, and whether it is pkg/printers'. It is made
// when first asked for: the printers' handlers take a while to register,
// and a listing of keys needs none.
func builtinConvertor(gr schema.GroupResource) (_ func() rest.TableConvertor, usesPrinters bool) {
	switch {
	case gr == schema.GroupResource{Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions"}:
		// apiextensions-apiserver's customresourcedefinition.NewREST.
		return crdtable.New, false
	case gr == schema.GroupResource{Group: "apiregistration.k8s.io", Resource: "apiservices"}:
		// kube-aggregator's apiservice/etcd.REST implements ConvertToTable
		// itself, from the object alone.
		return func() rest.TableConvertor { return &apiserviceregistry.REST{} }, false
	case defaultConvertorResources[gr]:
		return func() rest.TableConvertor { return rest.NewDefaultTableConvertor(gr) }, false
	}
	return printerConvertor, true
}
