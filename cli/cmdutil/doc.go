// Package cmdutil is what etcdscope's commands share, as kubectl's
// pkg/cmd/util is kubectl's: the connection flags and the source they name
// (a live etcd, a data file, the bundled cluster), the decoding flags, the
// one printer behind every -o, and the check of a revision flag. cli and
// its command packages (cli/get) import it, and it imports neither: one
// package, because opening a source already prints (the line that says
// which etcd answers goes through the printer's palette).
package cmdutil
