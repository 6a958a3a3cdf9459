// Package timeline is the timeline screen: what changed in a window of
// revisions, grouped by resource and namespace, and who changed it; and
// the read of that window (Read), which `etcdscope changes` shares.
package timeline
