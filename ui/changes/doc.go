// Package changes is screen 7, the timeline: what changed in a window of
// revisions, grouped by resource and namespace, and who changed it, as the
// read and the model of etcdview/changes (which `etcdscope changes` shares)
// give it.
package changes
