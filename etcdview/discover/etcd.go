package discover

import (
	"fmt"
	"net"
	"net/url"
	"path"
	"strings"

	"sigs.k8s.io/yaml"
)

// etcdServer is what an etcd member's own configuration says of its client
// side, in its flags (kubeadm's etcd.yaml) or its --config-file (RKE2's and
// k3s' db/etcd/config), whose keys are the flags' names. etcd's own
// embed.ConfigFromFile is not used: it opens the path itself, outside the
// host root, and checks the whole member's configuration, peers and all.
type etcdServer struct {
	ListenClientURLs    string `json:"listen-client-urls"`
	AdvertiseClientURLs string `json:"advertise-client-urls"`
	ClientTLS           struct {
		TrustedCAFile  string `json:"trusted-ca-file"`
		ClientCertAuth bool   `json:"client-cert-auth"`
	} `json:"client-transport-security"`
	// from names where these came from, in messages.
	from string
}

// clientPairs are the client certificates that control planes keep beside
// etcd's CA, tried in order: kubeadm's healthcheck client (an etcd-only
// node has no kube-apiserver and so no apiserver-etcd-client), then RKE2's
// and k3s' client, the pair their kube-apiserver uses.
var clientPairs = []string{"healthcheck-client", "client"}

// etcdProbe reads etcd's own static pod manifest, for a node that runs etcd
// and no kube-apiserver.
func etcdProbe(manifestPath, what string) probe {
	return func(n node) (Found, bool, error) {
		m, ok, err := n.readManifest(manifestPath, "etcd")
		if err != nil || !ok {
			return Found{}, false, err
		}
		s := etcdServer{from: n.shown(manifestPath) + "'s etcd"}
		if file := m.flags["config-file"]; file != "" {
			if s, err = n.readEtcdConfig(m.onNode(file), s.from+"'s --config-file"); err != nil {
				return Found{}, false, err
			}
		} else {
			s.ListenClientURLs, s.AdvertiseClientURLs = m.flags["listen-client-urls"], m.flags["advertise-client-urls"]
			s.ClientTLS.TrustedCAFile = m.flags["trusted-ca-file"]
			auth, given := m.flags["client-cert-auth"]
			s.ClientTLS.ClientCertAuth = given && (auth == "" || auth == "true")
		}
		f, err := s.connection(n, m.onNode)
		if err != nil {
			return Found{}, false, err
		}
		f.Layout, f.What, f.From, f.Prefix = EtcdOnly, what, manifestPath, DefaultPrefix
		return f, true, nil
	}
}

// readEtcdConfig reads an etcd --config-file at path on the node, which
// what names.
func (n node) readEtcdConfig(p, what string) (etcdServer, error) {
	s := etcdServer{from: n.shown(p)}
	data, ok, err := n.read(p)
	switch {
	case err != nil:
		return s, err
	case !ok:
		return s, fmt.Errorf("%s: %s is not there", what, n.shown(p))
	}
	if err := yaml.Unmarshal(data, &s); err != nil {
		return s, fmt.Errorf("%s is not an etcd config file: %w", n.shown(p), err)
	}
	return s, nil
}

// connection is the member's client URL and the TLS files to reach it,
// its paths mapped to the node's by onNode (the container's mounts).
func (s etcdServer) connection(n node, onNode func(string) string) (Found, error) {
	ep, err := s.clientURL()
	if err != nil {
		return Found{}, err
	}
	f := Found{Endpoints: []string{ep}}
	if s.ClientTLS.TrustedCAFile == "" {
		return f, nil
	}
	ca := onNode(s.ClientTLS.TrustedCAFile)
	if f.CACert, err = n.need(ca, s.from+"'s trusted-ca-file"); err != nil {
		return Found{}, err
	}
	for _, pair := range clientPairs {
		cert, key := path.Join(path.Dir(ca), pair+".crt"), path.Join(path.Dir(ca), pair+".key")
		if f.Cert, err = n.optional(cert); err != nil {
			return Found{}, err
		}
		if f.Cert == "" {
			continue
		}
		if f.Key, err = n.need(key, n.shown(cert)+"'s key"); err != nil {
			return Found{}, err
		}
		return f, nil
	}
	if !s.ClientTLS.ClientCertAuth {
		return f, nil
	}
	return Found{}, fmt.Errorf("%s asks clients for a certificate, and there is none beside its CA %s (%s)",
		s.from, n.shown(ca), strings.Join(clientPairs, ".crt, ")+".crt")
}

// clientURL is the URL to reach the member from this node: a loopback one
// it listens on (kubeadm's https://127.0.0.1:2379), else the first it
// advertises, else the first it listens on, a wildcard address (0.0.0.0,
// [::]) standing for loopback.
func (s etcdServer) clientURL() (string, error) {
	listen := splitList(s.ListenClientURLs)
	for _, u := range listen {
		if p, err := url.Parse(u); err == nil && p.Hostname() != "" && isLoopback(p.Hostname()) {
			return u, nil
		}
	}
	if adv := splitList(s.AdvertiseClientURLs); len(adv) > 0 {
		return adv[0], nil
	}
	if len(listen) == 0 {
		return "", fmt.Errorf("%s names no listen-client-urls", s.from)
	}
	p, err := url.Parse(listen[0])
	if err != nil {
		return "", fmt.Errorf("%s: listen-client-urls %q: %w", s.from, listen[0], err)
	}
	if ip := net.ParseIP(p.Hostname()); ip != nil && ip.IsUnspecified() {
		p.Host = net.JoinHostPort("127.0.0.1", p.Port())
	}
	return p.String(), nil
}

func isLoopback(host string) bool {
	ip := net.ParseIP(host)
	return host == "localhost" || ip != nil && ip.IsLoopback()
}

func splitList(list string) []string {
	var out []string
	for s := range strings.SplitSeq(list, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}
