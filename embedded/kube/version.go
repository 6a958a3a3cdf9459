package kube

import (
	"github.com/etcdscope/etcdscope/decode"
	apimachineryversion "k8s.io/apimachinery/pkg/version"
	utilcompatibility "k8s.io/apiserver/pkg/util/compatibility"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	basecompatibility "k8s.io/component-base/compatibility"
)

// releaseVersion reports the Kubernetes release in go.mod where a
// component reports its version (kube-apiserver's /version, the user
// agents): Kubernetes' release builds stamp it into component-base/version
// with -ldflags, which go run and go build here do not, and kubectl
// refuses the unstamped "v0.0.0-master+$Format:%H$".
type releaseVersion struct {
	basecompatibility.MutableEffectiveVersion
}

func (v releaseVersion) Info() *apimachineryversion.Info {
	info := v.MutableEffectiveVersion.Info()
	info.GitVersion = decode.KubernetesVersion
	info.GitTreeState = "clean"
	return info
}

// releaseRegistry is a registry of the kube component's version and
// feature gates like the process-wide one kube-apiserver reads by default,
// with the release's version in it.
func releaseRegistry() (basecompatibility.ComponentGlobalsRegistry, error) {
	reg := basecompatibility.NewComponentGlobalsRegistry()
	v := releaseVersion{utilcompatibility.DefaultBuildEffectiveVersion()}
	if err := reg.Register(basecompatibility.DefaultKubeComponent, v, utilfeature.DefaultMutableFeatureGate); err != nil {
		return nil, err
	}
	return reg, nil
}
