// Package clusters reads the config file that names clusters, as k9s'
// contexts name kubeconfig's: ${XDG_CONFIG_HOME:-~/.config}/etcdscope/config.yaml.
// Each cluster is a connection as the flags would give it (endpoints and
// TLS files, a user, an encryption config, or an offline --db file). The
// file holds paths, never secrets: a password is asked for when the
// command runs, as with --user.
package clusters

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"sigs.k8s.io/yaml"
)

// Cluster is one named cluster of the file. Relative paths are read from
// the file's directory, as kubeconfig's are.
type Cluster struct {
	Name             string   `json:"name"`
	Endpoints        []string `json:"endpoints,omitempty"`
	CACert           string   `json:"cacert,omitempty"`
	Cert             string   `json:"cert,omitempty"`
	Key              string   `json:"key,omitempty"`
	User             string   `json:"user,omitempty"`
	EncryptionConfig string   `json:"encryption-config,omitempty"`
	DB               string   `json:"db,omitempty"`
	// Password is decoded only to be refused with a message of its own,
	// rather than as one unknown field among others.
	Password *string `json:"password,omitempty"`
}

// Config is the file.
type Config struct {
	// Path is the file it was read from.
	Path     string    `json:"-"`
	Clusters []Cluster `json:"clusters"`
}

// Reserved are the names :ctx gives the clusters that are not in the
// file: the node's own etcd that discovery found, the bundled cluster, and
// what the command line named.
var Reserved = []string{"node", "bundled", "flags"}

// maxFile bounds the file: a few clusters' paths.
const maxFile = 1 << 20

// Path is where the file is: $XDG_CONFIG_HOME/etcdscope/config.yaml, or
// ~/.config/etcdscope/config.yaml when XDG_CONFIG_HOME is unset or, as
// the XDG spec says, not absolute.
func Path() (string, error) {
	base := os.Getenv("XDG_CONFIG_HOME")
	if !filepath.IsAbs(base) {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("the config file: %w", err)
		}
		base = filepath.Join(home, ".config")
	}
	return filepath.Join(base, "etcdscope", "config.yaml"), nil
}

// Load reads the file at path; a file that does not exist is no config
// (nil, nil). The file names files the tool will read as the user who
// runs it, so it must be that user's and written by no one else, as the
// bundled cluster's data dir must (embedded/datadir.CheckDir).
func Load(path string) (*Config, error) {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("config file %s: %w", path, err)
	}
	if err := checkOwner(path, fi); err != nil {
		return nil, err
	}
	if fi.Size() > maxFile {
		return nil, fmt.Errorf("config file %s holds %d bytes, more than a config file (%d)", path, fi.Size(), maxFile)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config file %s: %w", path, err)
	}
	c := &Config{Path: path}
	if err := yaml.UnmarshalStrict(data, c); err != nil {
		return nil, fmt.Errorf("config file %s: %s", path, oneLine(err))
	}
	if err := c.check(); err != nil {
		return nil, fmt.Errorf("config file %s: %w", path, err)
	}
	c.resolvePaths(filepath.Dir(path))
	return c, nil
}

func checkOwner(path string, fi fs.FileInfo) error {
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("config file %s is not a regular file", path)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		return fmt.Errorf("config file %s belongs to uid %d, not you (uid %d): it names files to read as you, so it must be yours", path, st.Uid, os.Getuid())
	}
	switch m := fi.Mode().Perm(); {
	case m&0o002 != 0:
		return fmt.Errorf("config file %s is writable by others (mode %04o): chmod go-w %s", path, m, path)
	case m&0o020 != 0:
		return fmt.Errorf("config file %s is writable by its group (mode %04o): chmod go-w %s", path, m, path)
	}
	return nil
}

// oneLine is a decoding error without the decoders' prefixes and on one
// line: "error unmarshaling JSON: while decoding JSON: json: unknown field".
func oneLine(err error) string {
	s := err.Error()
	for _, p := range []string{"error converting YAML to JSON: ", "error unmarshaling JSON: ", "while decoding JSON: ", "json: "} {
		s = strings.ReplaceAll(s, p, "")
	}
	return strings.Join(strings.Fields(s), " ")
}

// check refuses what the file must not say: a password, a cluster without
// a name or named twice, one that names no source or two.
func (c *Config) check() error {
	var seen []string
	for i, cl := range c.Clusters {
		if cl.Name == "" {
			return fmt.Errorf("cluster %d has no name", i+1)
		}
		what := fmt.Sprintf("cluster %q", cl.Name)
		switch {
		case slices.Contains(seen, cl.Name):
			return fmt.Errorf("%s is named twice", what)
		case slices.Contains(Reserved, cl.Name):
			return fmt.Errorf("%s: the name is taken (%s name the clusters not in the file)", what, strings.Join(Reserved, ", "))
		case cl.Password != nil:
			return fmt.Errorf("%s: password: the file holds paths, never secrets; remove it, and etcdscope asks for the password (or give --password, or ETCDCTL_PASSWORD)", what)
		case strings.Contains(cl.User, ":"):
			return fmt.Errorf("%s: user: a name, not name:password (the file holds no secrets)", what)
		case len(cl.Endpoints) > 0 && cl.DB != "":
			return fmt.Errorf("%s: endpoints and db name two sources: give one", what)
		case len(cl.Endpoints) == 0 && cl.DB == "":
			return fmt.Errorf("%s names no source: give endpoints or db", what)
		case slices.Contains(cl.Endpoints, ""):
			return fmt.Errorf("%s: endpoints has an empty entry", what)
		}
		seen = append(seen, cl.Name)
	}
	return nil
}

func (c *Config) resolvePaths(dir string) {
	for i := range c.Clusters {
		cl := &c.Clusters[i]
		for _, p := range []*string{&cl.CACert, &cl.Cert, &cl.Key, &cl.EncryptionConfig, &cl.DB} {
			if *p != "" && !filepath.IsAbs(*p) {
				*p = filepath.Join(dir, *p)
			}
		}
	}
}

// Names are the clusters' names, in the file's order.
func (c *Config) Names() []string {
	var out []string
	for _, cl := range c.Clusters {
		out = append(out, cl.Name)
	}
	return out
}

// Get is the cluster named name; an unknown name lists the names there
// are.
func (c *Config) Get(name string) (Cluster, error) {
	for _, cl := range c.Clusters {
		if cl.Name == name {
			return cl, nil
		}
	}
	if len(c.Clusters) == 0 {
		return Cluster{}, fmt.Errorf("no cluster %q: config file %s names none", name, c.Path)
	}
	return Cluster{}, fmt.Errorf("no cluster %q in config file %s: it names %s", name, c.Path, strings.Join(c.Names(), ", "))
}

// Named reads the user's file (Path) and returns the cluster named name.
func Named(name string) (Cluster, error) {
	path, err := Path()
	if err != nil {
		return Cluster{}, err
	}
	c, err := Load(path)
	if err != nil {
		return Cluster{}, err
	}
	if c == nil {
		return Cluster{}, fmt.Errorf("no cluster %q: there is no config file %s to name it", name, path)
	}
	return c.Get(name)
}

// Source says where the cluster is, as the explorer's header does.
func (cl Cluster) Source() string {
	if cl.DB != "" {
		return "data file " + cl.DB
	}
	return "etcd at " + strings.Join(cl.Endpoints, ",")
}
