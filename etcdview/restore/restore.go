// Package restore turns what etcd held at a revision into a manifest that
// `kubectl apply -f -` takes: one object as it was (or, deleted, as it last
// was), or everything a user wrote in a namespace, with what the API
// server and the controllers set left out. It only reads; applying the
// manifest is the user's act.
package restore

import (
	"github.com/etcdscope/etcdscope/decode"
)

// Options say what a restore reads and keeps.
type Options struct {
	// ShowSecrets puts Secrets in the manifest, with their data; without
	// it they are listed in LeftOut.
	ShowSecrets bool
	// Selector is a label selector as kubectl's -l spells it: a namespace
	// restore keeps the objects it matches. "" matches everything.
	Selector string
	// Decoder decodes the values (decryption, the etcd prefix), as the
	// CLI builds it from its flags. Its ShowSecrets and JSONOnly are set
	// by the restore.
	Decoder decode.Decoder
}

// Manifest is what a restore found: the manifest to apply, what it holds
// and what it left out.
type Manifest struct {
	// YAML is the manifest kubectl apply -f - takes: the object itself
	// for one object, a v1 List of them for a namespace. Empty when
	// nothing was kept.
	YAML []byte
	// JSON is the same manifest as JSON.
	JSON []byte
	// Objects are what the manifest holds, in the order it holds them.
	Objects []Restored
	// LeftOut are the objects read but not put in the manifest, each with
	// why.
	LeftOut []LeftOut
	// Revision is the revision the restore read at: the one asked for, or
	// for a namespace read at the newest, that one; for one object, the
	// one before its deletion for a deleted object, and its mod_revision
	// for one read at the newest.
	Revision int64
}

// Restored is one object of a manifest.
type Restored struct {
	Key       string
	Kind      string // "Deployment", "Widget"
	Namespace string
	Name      string
	// Revision is the mod_revision of the version restored: the object's
	// resourceVersion as it was.
	Revision int64
	// Note says why the object is there when the user did not ask for it
	// ("the CustomResourceDefinition of the Widgets restored: gone"), or "".
	Note string
	// Dropped names what of the object was removed beyond the fields the
	// server always sets ("ownerReference to ReplicaSet web-7d4, gone"),
	// one phrase each.
	Dropped []string
}

// LeftOut is one object a restore did not put in its manifest.
type LeftOut struct {
	Key       string
	Kind      string
	Namespace string
	Name      string
	Why       string // "a Pod of ReplicaSet web-7d4", "a Secret: give --show-secrets"
}
