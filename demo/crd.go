package demo

import (
	"context"
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// The shop's own kind, a CustomResourceDefinition: kube-apiserver's
// apiextensions server stores its objects as JSON under
// /registry/shop.etcdscope.io/carts/.
var cartResource = schema.GroupVersionResource{Group: "shop.etcdscope.io", Version: "v1", Resource: "carts"}

func cartCRD() *apiextensionsv1.CustomResourceDefinition {
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: cartResource.Resource + "." + cartResource.Group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: cartResource.Group,
			Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "carts", Singular: "cart", Kind: "Cart", ShortNames: []string{"ct"}},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: cartResource.Version, Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{"spec": {
						Type: "object",
						Properties: map[string]apiextensionsv1.JSONSchemaProps{
							"customer": {Type: "string"},
							"items":    {Type: "integer", Minimum: ptrFloat(0)},
						},
					}},
				}},
				Subresources: &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
			}},
		},
	}
}

func ptrFloat(f float64) *float64 { return &f }

// createCartCRD creates the CRD where absent, as the admin.
func createCartCRD(ctx context.Context, c clients) error {
	cs, err := apiextensionsclient.NewForConfig(c.restFor(ScriptUser, "kubectl"))
	if err != nil {
		return err
	}
	_, err = cs.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, cartCRD(), addon)
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("create the Cart CRD: %w", err)
	}
	return nil
}

// newCart is a Cart of the script's cycle.
func newCart(ns string, cycle int) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": cartResource.Group + "/" + cartResource.Version, "kind": "Cart",
		"metadata": map[string]any{"name": fmt.Sprintf("cart-%d", cycle), "namespace": ns},
		"spec":     map[string]any{"customer": fmt.Sprintf("customer-%d", cycle), "items": int64(cycle%7 + 1)},
	}}
	return u
}

// createCart creates a Cart through the dynamic client, as kubectl does.
func createCart(ctx context.Context, dyn dynamic.Interface, ns string, cycle int) error {
	_, err := dyn.Resource(cartResource).Namespace(ns).Create(ctx, newCart(ns, cycle), metav1.CreateOptions{FieldManager: "kubectl-client-side-apply"})
	return err
}
