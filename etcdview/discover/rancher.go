package discover

import (
	"fmt"
	"os"
	"path"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"
)

// rancherConfig is the one key of k3s' and RKE2's config file that moves
// their files: --data-dir (default /var/lib/rancher/k3s, /var/lib/rancher/rke2).
type rancherConfig struct {
	DataDir string `json:"data-dir"`
}

// underDataDir is the probe mk makes for the data dir that distribution
// ("k3s", "rke2") runs with, read when the probe runs: a config file of
// RKE2's that cannot be read must not stop a kubeadm node from being found.
func underDataDir(distribution string, mk func(dataDir string) probe) probe {
	return func(n node) (Found, bool, error) {
		dir, err := n.dataDir(distribution)
		if err != nil {
			return Found{}, false, err
		}
		return mk(dir)(n)
	}
}

// dataDir is the data dir that distribution's config files name, as k3s
// and RKE2 read them: /etc/rancher/NAME/config.yaml, then the files of
// config.yaml.d in the order of their names, a later one winning. A
// --data-dir given on the command line (in the systemd unit) is not seen.
func (n node) dataDir(distribution string) (string, error) {
	dir := "/var/lib/rancher/" + distribution
	etc := "/etc/rancher/" + distribution
	files := []string{etc + "/config.yaml"}
	dropIns, err := n.dropIns(etc + "/config.yaml.d")
	if err != nil {
		return "", err
	}
	for _, p := range append(files, dropIns...) {
		data, ok, err := n.read(p)
		if err != nil {
			return "", err
		}
		if !ok {
			continue
		}
		var c rancherConfig
		if err := yaml.Unmarshal(data, &c); err != nil {
			return "", fmt.Errorf("%s is not a %s config file: %w", n.shown(p), distribution, err)
		}
		if c.DataDir != "" {
			dir = path.Clean("/" + c.DataDir)
		}
	}
	return dir, nil
}

// dropIns are the .yaml files of directory d on the node, in name order.
func (n node) dropIns(d string) ([]string, error) {
	local, fi, err := n.stat(d)
	if err != nil || fi == nil || !fi.IsDir() {
		return nil, err
	}
	entries, err := os.ReadDir(local)
	if err != nil {
		return nil, n.fileError(d, err)
	}
	var files []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".yaml") {
			files = append(files, path.Join(d, e.Name()))
		}
	}
	sort.Strings(files)
	return files, nil
}
