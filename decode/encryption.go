package decode

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"google.golang.org/protobuf/encoding/protowire"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	apiserverconfig "k8s.io/apiserver/pkg/apis/apiserver"
	apiserverconfigv1 "k8s.io/apiserver/pkg/apis/apiserver/v1"
	"k8s.io/apiserver/pkg/apis/apiserver/validation"
	"k8s.io/apiserver/pkg/storage/value"
	aestransformer "k8s.io/apiserver/pkg/storage/value/encrypt/aes"
	"k8s.io/apiserver/pkg/storage/value/encrypt/secretbox"
)

// encryptedPrefix starts every value an encryption provider wrote; the
// identity transformer refuses to read such data as plain
// (k8s.io/apiserver/pkg/storage/value/encrypt/identity).
var encryptedPrefix = []byte("k8s:enc:")

// EncryptionInfo says how a value was encrypted at rest, read from its prefix
// k8s:enc:<provider>:<version>:<key or KMS provider name>:.
type EncryptionInfo struct {
	Provider string // aescbc, aesgcm, secretbox, kms
	Version  string // v1, v2
	KeyName  string // the key's name, or the KMS provider's name
	KMSKeyID string // KMS v2: the key ID the plugin reported
}

func (e *EncryptionInfo) String() string {
	if e.Provider == "kms" {
		s := fmt.Sprintf("KMS %s provider %q", e.Version, e.KeyName)
		if e.KMSKeyID != "" {
			s += fmt.Sprintf(" (key ID %q)", e.KMSKeyID)
		}
		return s
	}
	return fmt.Sprintf("%s key %q", e.Provider, e.KeyName)
}

// Label names how a value is stored for comparing with WritesWith: String
// without the KMS v2 key ID (a plugin's keys are its own business), "" for
// a plain value (nil).
func (e *EncryptionInfo) Label() string {
	if e == nil {
		return ""
	}
	return (&EncryptionInfo{Provider: e.Provider, Version: e.Version, KeyName: e.KeyName}).String()
}

// EncryptionOf labels a stored value from its prefix alone, without
// decrypting: nil when no provider wrote it (identity).
func EncryptionOf(value []byte) *EncryptionInfo {
	if !bytes.HasPrefix(value, encryptedPrefix) {
		return nil
	}
	info, _ := parseEncryptionPrefix(value)
	return info
}

func (e *EncryptionInfo) section(size int) Section {
	return Section{Name: "encryption", Text: toYAML(map[string]any{
		"provider": e.Provider, "version": e.Version, "key": e.KeyName,
		"kmsKeyID": e.KMSKeyID, "bytes": size,
	})}
}

func parseEncryptionPrefix(data []byte) (*EncryptionInfo, []byte) {
	parts := bytes.SplitN(data[len(encryptedPrefix):], []byte(":"), 4)
	if len(parts) < 4 {
		return &EncryptionInfo{Provider: "unknown"}, nil
	}
	info := &EncryptionInfo{Provider: string(parts[0]), Version: string(parts[1]), KeyName: string(parts[2])}
	if info.Provider == "kms" && info.Version == "v2" {
		info.KMSKeyID = kmsV2KeyID(parts[3])
	}
	return info, parts[3]
}

// kmsV2KeyID reads keyID (field 2) of the kmsv2 EncryptedObject message
// (k8s.io/apiserver/pkg/storage/value/encrypt/envelope/kmsv2/v2/api.proto).
func kmsV2KeyID(b []byte) string {
	fields, _ := walkFields(b, maxRawDepth)
	for _, f := range fields {
		if f.Num == 2 && f.Type == protowire.BytesType {
			return string(f.Bytes)
		}
	}
	return ""
}

// Encryption decrypts values with the aescbc, aesgcm and secretbox keys of a
// kube-apiserver EncryptionConfiguration. KMS providers need their plugin,
// which etcdscope does not call.
type Encryption struct {
	rules []encryptionRule
}

type encryptionRule struct {
	resources []string // as written: "secrets", "*.apps", "*.", "*.*"
	writes    string   // how its first provider encrypts new values; "" for identity
	// reads are the values its providers read, as EncryptionInfo.Label
	// names them: each key of each provider, "" for identity.
	reads     []string
	providers []value.PrefixTransformer // one per aescbc/aesgcm/secretbox entry, in file order
	keys      map[string][]string       // provider → key names, for messages
}

var encryptionConfigCodecs = sync.OnceValue(func() serializer.CodecFactory {
	s := runtime.NewScheme()
	utilruntime.Must(apiserverconfig.AddToScheme(s))
	utilruntime.Must(apiserverconfigv1.AddToScheme(s))
	return serializer.NewCodecFactory(s, serializer.EnableStrict)
})

// ParseEncryptionConfig reads the file kube-apiserver takes as
// --encryption-provider-config, with the API server's own decoder and
// validation, and builds its transformers the way
// k8s.io/apiserver/pkg/server/options/encryptionconfig does.
func ParseEncryptionConfig(data []byte) (*Encryption, error) {
	obj, gvk, err := encryptionConfigCodecs().UniversalDecoder().Decode(data, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("decode encryption configuration: %w", err)
	}
	cfg, ok := obj.(*apiserverconfig.EncryptionConfiguration)
	if !ok {
		return nil, fmt.Errorf("encryption configuration: got %v, want EncryptionConfiguration", gvk)
	}
	if err := validation.ValidateEncryptionConfiguration(cfg, false).ToAggregate(); err != nil {
		return nil, fmt.Errorf("encryption configuration: %w", err)
	}
	e := &Encryption{}
	for _, rc := range cfg.Resources {
		rule := encryptionRule{resources: rc.Resources, keys: map[string][]string{}}
		for _, p := range rc.Providers {
			rule.reads = append(rule.reads, readsWith(p)...)
		}
		if len(rule.reads) > 0 {
			rule.writes = rule.reads[0]
		}
		for _, p := range rc.Providers {
			var t value.PrefixTransformer
			switch {
			case p.AESCBC != nil:
				t, err = keyedTransformer("aescbc", p.AESCBC.Keys, rule.keys, withAES(func(b cipher.Block) (value.Transformer, error) {
					return aestransformer.NewCBCTransformer(b), nil
				}))
			case p.AESGCM != nil:
				t, err = keyedTransformer("aesgcm", p.AESGCM.Keys, rule.keys, withAES(aestransformer.NewGCMTransformer))
			case p.Secretbox != nil:
				t, err = keyedTransformer("secretbox", p.Secretbox.Keys, rule.keys, func(k []byte) (value.Transformer, error) {
					if len(k) != 32 {
						return nil, fmt.Errorf("secretbox keys are 32 bytes, got %d", len(k))
					}
					return secretbox.NewSecretboxTransformer([32]byte(k)), nil
				})
			default: // identity reads plain values; kms needs a plugin
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("encryption configuration: %w", err)
			}
			rule.providers = append(rule.providers, t)
		}
		e.rules = append(e.rules, rule)
	}
	return e, nil
}

// readsWith are the values a provider reads, as EncryptionInfo.Label
// names them: one per key of a keyed provider, in file order (the first is
// what it writes with); the KMS plugin's; "" for identity.
func readsWith(p apiserverconfig.ProviderConfiguration) []string {
	keyed := func(provider string, keys []apiserverconfig.Key) []string {
		var labels []string
		for _, k := range keys {
			labels = append(labels, (&EncryptionInfo{Provider: provider, KeyName: k.Name}).Label())
		}
		return labels
	}
	switch {
	case p.AESCBC != nil:
		return keyed("aescbc", p.AESCBC.Keys)
	case p.AESGCM != nil:
		return keyed("aesgcm", p.AESGCM.Keys)
	case p.Secretbox != nil:
		return keyed("secretbox", p.Secretbox.Keys)
	case p.KMS != nil:
		return []string{(&EncryptionInfo{Provider: "kms", Version: p.KMS.APIVersion, KeyName: p.KMS.Name}).Label()}
	}
	return []string{""}
}

// WritesWith is how kube-apiserver encrypts a new value of the resource
// under this configuration: the first provider of the first rule that
// covers it, as in "aescbc key \"key1\"", or "" when it stores the value
// plain (identity first, or no rule names the resource).
func (e *Encryption) WritesWith(group, resource string) string {
	if e == nil {
		return ""
	}
	for _, r := range e.rules {
		if r.covers(group, resource) {
			return r.writes
		}
	}
	return ""
}

// Reads says whether kube-apiserver reads a value of the resource stored
// as info (nil: plain) under this configuration: the rule that covers the
// resource lists that provider and key (identity, for a plain value). A
// resource no rule names is read, and written, plain only.
func (e *Encryption) Reads(group, resource string, info *EncryptionInfo) bool {
	if e == nil {
		return info == nil
	}
	for _, r := range e.rules {
		if r.covers(group, resource) {
			return slices.Contains(r.reads, info.Label())
		}
	}
	return info == nil
}

// withAES makes an AES block cipher of the key for an aes* transformer.
func withAES(build func(cipher.Block) (value.Transformer, error)) func([]byte) (value.Transformer, error) {
	return func(key []byte) (value.Transformer, error) {
		block, err := aes.NewCipher(key)
		if err != nil {
			return nil, err
		}
		return build(block)
	}
}

// keyedTransformer routes by key name the way kube-apiserver nests prefix
// transformers: "k8s:enc:<provider>:v1:" then "<key name>:".
func keyedTransformer(provider string, keys []apiserverconfig.Key, names map[string][]string, build func([]byte) (value.Transformer, error)) (value.PrefixTransformer, error) {
	var byName []value.PrefixTransformer
	for _, k := range keys {
		secret, err := base64.StdEncoding.DecodeString(k.Secret)
		if err != nil {
			return value.PrefixTransformer{}, fmt.Errorf("%s key %q: secret is not base64: %w", provider, k.Name, err)
		}
		t, err := build(secret)
		if err != nil {
			return value.PrefixTransformer{}, fmt.Errorf("%s key %q: %w", provider, k.Name, err)
		}
		byName = append(byName, value.PrefixTransformer{Prefix: []byte(k.Name + ":"), Transformer: t})
		names[provider] = append(names[provider], k.Name)
	}
	return value.PrefixTransformer{
		Prefix:      []byte("k8s:enc:" + provider + ":v1:"),
		Transformer: value.NewPrefixTransformers(errNoKey, byName...),
	}, nil
}

var errNoKey = errors.New("no key of that name")

// decrypt returns the plaintext, or a problem in plain words.
func (d Decoder) decrypt(k Key, data []byte) ([]byte, *EncryptionInfo, string) {
	info, _ := parseEncryptionPrefix(data)
	switch {
	case info.Provider == "kms":
		return nil, info, fmt.Sprintf("encrypted with %s; decrypting needs that KMS plugin, which etcdscope does not call", info)
	case info.Provider != "aescbc" && info.Provider != "aesgcm" && info.Provider != "secretbox":
		return nil, info, fmt.Sprintf("encrypted at rest with a provider this build does not know (%q)", info.Provider)
	case d.Encryption == nil:
		return nil, info, fmt.Sprintf("encrypted with %s; pass --encryption-config", info)
	}
	return d.Encryption.decrypt(k, data, info)
}

func (e *Encryption) decrypt(k Key, data []byte, info *EncryptionInfo) ([]byte, *EncryptionInfo, string) {
	var candidates []value.PrefixTransformer
	var known []string
	for _, r := range e.orderFor(k) {
		candidates = append(candidates, r.providers...)
		known = append(known, r.keys[info.Provider]...)
	}
	if !slices.Contains(known, info.KeyName) {
		have := "none"
		if len(known) > 0 {
			have = strings.Join(slices.Compact(slices.Sorted(slices.Values(known))), ", ")
		}
		return nil, info, fmt.Sprintf("encrypted with %s, which the encryption config does not have (its %s keys: %s)", info, info.Provider, have)
	}
	// aesgcm authenticates the full etcd key (etcd3 store's
	// authenticatedDataString); aescbc and secretbox ignore it.
	t := value.NewPrefixTransformers(errNoKey, candidates...)
	plain, _, err := t.TransformFromStorage(context.Background(), data, value.DefaultContext(k.Raw))
	if trimmed, ok := bytes.CutSuffix(data, []byte("\n")); err != nil && ok {
		// The newline `etcdctl get --print-value-only` appends is not part
		// of the ciphertext; every provider here rejects it.
		if p, _, terr := t.TransformFromStorage(context.Background(), trimmed, value.DefaultContext(k.Raw)); terr == nil {
			plain, err = p, nil
		}
	}
	if err != nil {
		why := "wrong secret?"
		switch {
		case info.Provider == "aesgcm" && k.Raw == "":
			why = "aesgcm binds each value to its etcd key: pass --key"
		case info.Provider == "aesgcm":
			why = "wrong secret, or a value copied from another key: aesgcm authenticates the etcd key"
		}
		return nil, info, fmt.Sprintf("encrypted with %s; that key in the encryption config does not decrypt it (%s): %v", info, why, err)
	}
	return plain, info, ""
}

// orderFor puts the rules that name k's resource first, as the API server
// would use them, then the rest: a key rotated out of one rule may still be
// listed in another.
func (e *Encryption) orderFor(k Key) []encryptionRule {
	var first, rest []encryptionRule
	for _, r := range e.rules {
		if r.covers(k.Group, k.Resource) {
			first = append(first, r)
		} else {
			rest = append(rest, r)
		}
	}
	return append(first, rest...)
}

// covers matches EncryptionConfiguration resource names: "secrets" (core),
// "deployments.apps", "*.apps", "*." (every core resource), "*.*".
func (r encryptionRule) covers(group, resource string) bool {
	for _, s := range r.resources {
		name, g, _ := strings.Cut(s, ".")
		if (name == resource || name == "*") && (g == group || g == "*") {
			return true
		}
	}
	return false
}
