package discover

import (
	"errors"
	"io/fs"
	"net"
	"syscall"
	"time"
)

// k3sEncryption is where, in its server directory, k3s keeps its
// EncryptionConfiguration when it runs with --secrets-encryption.
const k3sEncryption = "/cred/encryption-config.json"

// k3sEtcd reads k3s' embedded etcd's config file, which k3s writes when
// it runs etcd (--cluster-init, or a server joined to one) and keeps after
// a migration from SQLite. Its paths are the node's own: k3s runs etcd in
// its own process, not in a container.
func k3sEtcd(server string) probe {
	return func(n node) (Found, bool, error) {
		config := server + "/db/etcd/config"
		_, fi, err := n.stat(config)
		if err != nil || fi == nil {
			return Found{}, false, err
		}
		s, err := n.readEtcdConfig(config, "k3s' etcd config")
		if err != nil {
			return Found{}, false, err
		}
		f, err := s.connection(n, func(p string) string { return p })
		if err != nil {
			return Found{}, false, err
		}
		f.Layout, f.What, f.From, f.Prefix = K3sEtcd, "embedded etcd of this k3s node", config, DefaultPrefix
		if f.EncryptionConfig, err = n.optional(server + k3sEncryption); err != nil {
			return Found{}, false, err
		}
		return f, true, nil
	}
}

// k3sKine finds k3s' default datastore: kine over SQLite, its file
// db/state.db and, while k3s runs, kine's socket kine.sock, which serves
// the etcd API as plain gRPC (k3s' kube-apiserver runs with
// --etcd-servers=unix://kine.sock and no etcd TLS flags). db/etcd/name
// proves nothing: k3s writes it on SQLite nodes too.
func k3sKine(server string) probe {
	return func(n node) (Found, bool, error) {
		db, sock := server+"/db/state.db", server+"/kine.sock"
		f := Found{Layout: K3sKine, Prefix: DefaultPrefix}
		local, fi, err := n.stat(db)
		if err != nil {
			return Found{}, false, err
		}
		if fi != nil {
			f.DB, f.What, f.From = local, "SQLite datastore of this k3s node", db
		}
		if local, fi, err = n.stat(sock); err != nil {
			return Found{}, false, err
		}
		switch {
		case fi == nil || fi.Mode().Type() != fs.ModeSocket:
		case f.DB != "" && refused(local):
			// k3s was killed: nothing listens on the socket it left.
			f.What += " (kine.sock is left from a k3s that stopped)"
		default:
			f.Socket, f.What, f.From = local, "kine of this k3s node", sock
			f.Endpoints = []string{"unix://" + local}
		}
		if f.From == "" {
			return Found{}, false, nil
		}
		if f.EncryptionConfig, err = n.optional(server + k3sEncryption); err != nil {
			return Found{}, false, err
		}
		return f, true, nil
	}
}

// refused says whether nothing listens on the Unix socket at path: a
// connection is refused at once. Any other failure (a socket this user may
// not use) is the live connection's to report.
func refused(path string) bool {
	c, err := net.DialTimeout("unix", path, time.Second)
	if err == nil {
		c.Close()
	}
	return errors.Is(err, syscall.ECONNREFUSED)
}
