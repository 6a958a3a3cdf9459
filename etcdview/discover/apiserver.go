package discover

import (
	"fmt"
	"strings"
)

// rke2Manifests is where RKE2's kubelet reads its static pods.
const rke2Manifests = "/var/lib/rancher/rke2/agent/pod-manifests"

// rke2Encryption is where RKE2 keeps its EncryptionConfiguration: it
// encrypts Secrets from the start.
const rke2Encryption = "/var/lib/rancher/rke2/server/cred/encryption-config.json"

// apiServerProbe reads kube-apiserver's static pod manifest, which names
// everything: its --etcd-servers, the client's TLS files, --etcd-prefix and
// --encryption-provider-config.
func apiServerProbe(layout Layout, manifestPath, what string) probe {
	return func(n node) (Found, bool, error) {
		m, ok, err := n.readManifest(manifestPath, "kube-apiserver")
		if err != nil || !ok {
			return Found{}, false, err
		}
		f, err := fromAPIServer(n, m)
		if err != nil {
			return Found{}, false, err
		}
		f.Layout, f.What = layout, what
		if f.EncryptionConfig == "" && layout == RKE2 {
			if f.EncryptionConfig, err = n.optional(rke2Encryption); err != nil {
				return Found{}, false, err
			}
		}
		return f, true, nil
	}
}

func fromAPIServer(n node, m *manifest) (Found, error) {
	f := Found{From: m.path, Prefix: m.flags["etcd-prefix"]}
	if f.Prefix == "" {
		f.Prefix = DefaultPrefix
	}
	var err error
	if f.Endpoints, err = m.endpoints(n, m.flags["etcd-servers"]); err != nil {
		return Found{}, err
	}
	if len(f.Endpoints) == 0 {
		return Found{}, fmt.Errorf("%s names no --etcd-servers for kube-apiserver", n.shown(m.path))
	}
	for _, file := range []struct {
		flag string
		to   *string
	}{
		{"etcd-cafile", &f.CACert},
		{"etcd-certfile", &f.Cert},
		{"etcd-keyfile", &f.Key},
		{"encryption-provider-config", &f.EncryptionConfig},
	} {
		if *file.to, err = m.file(n, file.flag); err != nil {
			return Found{}, err
		}
	}
	return f, nil
}

// endpoints splits a comma-separated list of client URLs. A Unix socket
// (RKE2 and k3s on kine: unixs://…/kine.sock) is a path in the container,
// which is somewhere else on this machine; a TCP address is the same from
// here, since kubectl debug's sysadmin profile shares the node's network.
func (m *manifest) endpoints(n node, list string) ([]string, error) {
	var eps []string
	for ep := range strings.SplitSeq(list, ",") {
		ep = strings.TrimSpace(ep)
		if ep == "" {
			continue
		}
		if scheme, p, ok := unixSocket(ep); ok {
			local, _, err := n.stat(m.onNode(p))
			if err != nil {
				return nil, err
			}
			ep = scheme + "://" + local
		}
		eps = append(eps, ep)
	}
	return eps, nil
}

// unixSocket splits unix:// and unixs:// endpoints, as etcd's client
// spells them, into their scheme and path.
func unixSocket(ep string) (scheme, path string, ok bool) {
	for _, s := range []string{"unix", "unixs"} {
		if p, ok := strings.CutPrefix(ep, s+"://"); ok {
			return s, p, true
		}
	}
	return "", "", false
}
