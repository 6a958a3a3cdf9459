package discover

import (
	"fmt"
	"path"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// manifest is a static pod manifest as the kubelet reads it, and the
// container of it that matters.
type manifest struct {
	// path is the manifest's, as the node names it.
	path string
	pod  *corev1.Pod
	c    *corev1.Container
	// flags are the container's --name=value and --name value flags.
	flags map[string]string
}

// readManifest reads the Pod at path and finds its container named name
// (or running a binary of that name). ok is false when there is no file.
func (n node) readManifest(path, name string) (m *manifest, ok bool, err error) {
	data, ok, err := n.read(path)
	if err != nil || !ok {
		return nil, false, err
	}
	var pod corev1.Pod
	if err := yaml.Unmarshal(data, &pod); err != nil {
		return nil, false, fmt.Errorf("%s is not a Pod manifest: %w", n.shown(path), err)
	}
	if pod.Kind != "Pod" || pod.APIVersion != "v1" {
		return nil, false, fmt.Errorf("%s is not a Pod manifest (apiVersion %q, kind %q)", n.shown(path), pod.APIVersion, pod.Kind)
	}
	c := container(&pod, name)
	if c == nil {
		return nil, false, fmt.Errorf("%s has no %s container", n.shown(path), name)
	}
	return &manifest{path: path, pod: &pod, c: c, flags: flags(c)}, true, nil
}

func container(pod *corev1.Pod, name string) *corev1.Container {
	for i, c := range pod.Spec.Containers {
		if c.Name == name || len(c.Command) > 0 && path.Base(c.Command[0]) == name {
			return &pod.Spec.Containers[i]
		}
	}
	return nil
}

// flags reads a container's flags as pflag would: kubeadm puts them in the
// Command after the binary, RKE2 in Args; both --name=value and --name
// value; the last one given wins.
func flags(c *corev1.Container) map[string]string {
	var argv []string
	if len(c.Command) > 0 {
		argv = append(argv, c.Command[1:]...)
	}
	argv = append(argv, c.Args...)
	m := map[string]string{}
	for i := 0; i < len(argv); i++ {
		name, ok := strings.CutPrefix(argv[i], "--")
		if !ok || name == "" {
			continue
		}
		name, value, hasValue := strings.Cut(name, "=")
		if !hasValue && i+1 < len(argv) && !strings.HasPrefix(argv[i+1], "-") {
			value = argv[i+1]
			i++
		}
		m[name] = value
	}
	return m
}

// onNode is where a path the container sees is on the node: under the
// hostPath volume of the deepest mount that holds it (kubeadm's
// extraVolumes may mount the node's /etc/kubernetes/encryption at
// /etc/kubernetes/enc). A path that no hostPath mount holds is in the
// container's image, not on the node: it is taken as the same path on the
// node, the best guess left, and need says when the file is not there.
func (m *manifest) onNode(p string) string {
	p = path.Clean("/" + p)
	deepest, onNode := -1, p
	for _, vm := range m.c.VolumeMounts {
		mount := path.Clean("/" + vm.MountPath)
		rest, ok := strings.CutPrefix(p, mount)
		if !ok || rest != "" && rest[0] != '/' && mount != "/" || len(mount) <= deepest {
			continue
		}
		if host := m.hostPath(vm.Name); host != "" {
			deepest, onNode = len(mount), path.Join(host, vm.SubPath, rest)
		}
	}
	return onNode
}

func (m *manifest) hostPath(volume string) string {
	for _, v := range m.pod.Spec.Volumes {
		if v.Name == volume && v.HostPath != nil {
			return v.HostPath.Path
		}
	}
	return ""
}

// file is the file a flag names, on this machine, checked to be there; ""
// when the flag is not given.
func (m *manifest) file(n node, flag string) (string, error) {
	p := m.flags[flag]
	if p == "" {
		return "", nil
	}
	return n.need(m.onNode(p), fmt.Sprintf("%s's --%s", n.shown(m.path), flag))
}
