// Package encryption counts how the values of each resource are stored at
// rest (plain, or by which provider and key) and says which of them the
// encryption config's write key does not cover: `etcdscope check
// encryption`.
package encryption

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/etcdscope/etcdscope/decode"
	"github.com/etcdscope/etcdscope/etcdview"
)

// Status is how the encryption config treats the values stored one way.
type Status string

const (
	// Written: stored as the config writes new values of the resource.
	Written Status = "written"
	// Older: the config still reads them but writes otherwise (an older
	// key, plain values where it encrypts, encrypted ones where it writes
	// plain); a rewrite moves them under the write key.
	Older Status = "older"
	// Unreadable: the config lists no provider that reads them (a key it
	// no longer has, plain values without identity): kube-apiserver fails
	// to read them.
	Unreadable Status = "unreadable"
	// Unknown: no config was given, so there is no write key to compare.
	Unknown Status = "unknown"
)

// Identity is the Label of plain values.
const Identity = "identity"

// Stored counts the values of one resource stored one way.
type Stored struct {
	// Label names it: "identity", `aescbc key "key1"`, `KMS v2 provider
	// "vault"`, as decode.EncryptionInfo.Label does.
	Label    string
	Provider string // identity, aescbc, aesgcm, secretbox, kms, or what the prefix says
	Version  string // kms: v1 or v2
	KeyName  string // the key's name, or the KMS provider's; "" for identity
	Count    int64
	Status   Status
	// Keys are the first etcd keys stored so, at most MaxExamples.
	Keys []string
}

// Resource is every way the values of one group/resource are stored.
type Resource struct {
	Group    string // "" for core
	Resource string // plural, as the key names it
	// WritesWith is the Label of what the config writes new values with
	// ("identity" when it stores them plain); "" without a config.
	WritesWith string
	Stored     []Stored // most values first
}

// Name is resource.group as kubectl names it ("deployments.apps"), the
// resource alone for the core group.
func (r Resource) Name() string {
	if r.Group == "" {
		return r.Resource
	}
	return r.Resource + "." + r.Group
}

// Report is what Run counted.
type Report struct {
	Prefix   string
	Revision int64
	// Config says an encryption config was given to compare with.
	Config bool
	Values int64 // object keys counted
	// Other are keys below Prefix that hold no object (markers, kine's
	// /registry/health), not counted in Values.
	Other     int64
	Resources []Resource // by name
	// Unlisted counts, by status, the values of the ways of storing past
	// MaxRows: a store with more than that is hostile or broken, and is
	// still counted whole.
	Unlisted map[Status]int64
}

// Bounds on what a report holds, whatever the store: its memory does not
// grow with the keys read.
const (
	MaxRows     = 1_000 // resource × way of storing
	MaxExamples = 3     // keys named per row
	// MaxName is the bytes kept of a name read from etcd (a resource or
	// group from a key, a key or provider name from a prefix): 253, a
	// DNS subdomain, holds every real one.
	MaxName = 253
	// MaxExampleKey is the bytes kept of a key named as an example; a
	// longer one ends in "…".
	MaxExampleKey = 1024
)

// Options say what Run reads.
type Options struct {
	Prefix string // "" means decode.DefaultPrefix + "/"
	Rev    int64  // 0: the newest
	// Config is the encryption config to compare with; nil reports what
	// is stored only.
	Config *decode.Encryption
	// Parser parses the keys; the zero value reads kube-apiserver's
	// default layout.
	Parser decode.KeyParser
}

type groupResource struct{ group, resource string }

// Run reads every value below the prefix, page by page, and keeps only how
// each is stored: memory is that of one page and the rows.
func Run(ctx context.Context, src etcdview.Source, opts Options) (*Report, error) {
	if opts.Prefix == "" {
		opts.Prefix = decode.DefaultPrefix + "/"
	}
	r := &Report{Prefix: opts.Prefix, Config: opts.Config != nil, Unlisted: map[Status]int64{}}
	rows := map[groupResource]map[string]*Stored{}
	n := 0
	err := etcdview.Pages(src, opts.Prefix, opts.Rev, etcdview.Paging{Values: true})(ctx, func(p etcdview.Page) error {
		r.Revision = p.Revision
		for _, kv := range p.Keys {
			k := opts.Parser.Parse(kv.Key)
			if !k.IsObject {
				r.Other++
				continue
			}
			r.Values++
			gr := groupResource{truncate(k.Group), truncate(k.Resource)}
			info := decode.EncryptionOf(kv.Value)
			label := labelOf(info)
			s := rows[gr][label]
			if s == nil {
				if n >= MaxRows {
					r.Unlisted[statusOf(opts.Config, gr, info)]++
					continue
				}
				n++
				s = newStored(opts.Config, gr, info, label)
				if rows[gr] == nil {
					rows[gr] = map[string]*Stored{}
				}
				rows[gr][label] = s
			}
			s.Count++
			if len(s.Keys) < MaxExamples {
				s.Keys = append(s.Keys, exampleKey(kv.Key))
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", opts.Prefix, err)
	}
	for gr, byLabel := range rows {
		res := Resource{Group: gr.group, Resource: gr.resource}
		if opts.Config != nil {
			res.WritesWith = cmp.Or(opts.Config.WritesWith(gr.group, gr.resource), Identity)
		}
		for _, s := range byLabel {
			res.Stored = append(res.Stored, *s)
		}
		slices.SortFunc(res.Stored, func(a, b Stored) int {
			return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Label, b.Label))
		})
		r.Resources = append(r.Resources, res)
	}
	slices.SortFunc(r.Resources, func(a, b Resource) int { return cmp.Compare(a.Name(), b.Name()) })
	return r, nil
}

// labelOf is the row a value counts in. Names read from a prefix are
// truncated: a hostile prefix could carry a megabyte of "key name".
func labelOf(info *decode.EncryptionInfo) string {
	if info == nil {
		return Identity
	}
	return capped(info).Label()
}

func capped(info *decode.EncryptionInfo) *decode.EncryptionInfo {
	return &decode.EncryptionInfo{Provider: truncate(info.Provider), Version: truncate(info.Version), KeyName: truncate(info.KeyName)}
}

// truncate keeps MaxName bytes of a name read from etcd.
func truncate(s string) string { return s[:min(len(s), MaxName)] }

// exampleKey is key as a row names it: whole up to MaxExampleKey bytes,
// the rest cut with "…" (etcd takes keys up to its request size, 1.5 MiB).
func exampleKey(key string) string {
	if len(key) <= MaxExampleKey {
		return key
	}
	return key[:MaxExampleKey] + "…"
}

func newStored(cfg *decode.Encryption, gr groupResource, info *decode.EncryptionInfo, label string) *Stored {
	s := &Stored{Label: label, Provider: Identity, Status: statusOf(cfg, gr, info)}
	if info != nil {
		c := capped(info)
		s.Provider, s.Version, s.KeyName = c.Provider, c.Version, c.KeyName
	}
	return s
}

// statusOf compares a value stored as info with what cfg writes and reads
// for the resource, as kube-apiserver picks the rule of a resource
// (k8s.io/apiserver/pkg/server/options/encryptionconfig).
func statusOf(cfg *decode.Encryption, gr groupResource, info *decode.EncryptionInfo) Status {
	switch {
	case cfg == nil:
		return Unknown
	case cfg.WritesWith(gr.group, gr.resource) == info.Label():
		return Written
	case cfg.Reads(gr.group, gr.resource, info):
		return Older
	}
	return Unreadable
}

// Count is the values of the rows of status st, and of those past MaxRows.
func (r *Report) Count(st Status) int64 {
	n := r.Unlisted[st]
	for _, res := range r.Resources {
		for _, s := range res.Stored {
			if s.Status == st {
				n += s.Count
			}
		}
	}
	return n
}

// Failed says values remain that the write key does not cover: kube-apiserver
// reads them with an older key or plain, or cannot read them at all.
func (r *Report) Failed() bool { return r.Count(Older)+r.Count(Unreadable) > 0 }
