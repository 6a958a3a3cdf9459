package cmdutil

import (
	"fmt"
	"os"

	"github.com/etcdscope/etcdscope/decode"
	"github.com/spf13/pflag"
)

// DecodeFlags say how values are shown, on every command that prints them.
type DecodeFlags struct {
	showSecrets       bool
	showManagedFields bool
	EncryptionConfig  string
	// target resolves the source the values come from, whose encryption
	// config (the node's kube-apiserver's) decrypts when the flag names
	// none; nil (decode's stdin) has none.
	target func() (*Target, error)
}

func (f *DecodeFlags) Register(fs *pflag.FlagSet) {
	fs.BoolVar(&f.showSecrets, "show-secrets", false, "show Secret data instead of <N bytes>")
	fs.BoolVar(&f.showManagedFields, "show-managed-fields", false, "keep metadata.managedFields in the output")
	f.RegisterEncryptionConfig(fs)
}

// RegisterEncryptionConfig registers --encryption-config alone, for the
// commands that read no value to show (check encryption).
func (f *DecodeFlags) RegisterEncryptionConfig(fs *pflag.FlagSet) {
	fs.StringVar(&f.EncryptionConfig, "encryption-config", "", "kube-apiserver's EncryptionConfiguration file, to decrypt aescbc, aesgcm and secretbox values; in bundled mode the control plane's kube-apiserver also encrypts with it")
}

// Decoder is the decode.Decoder the flags describe, for the source the
// command reads.
func (f *DecodeFlags) Decoder() (decode.Decoder, error) {
	var t *Target
	if f.target != nil && f.EncryptionConfig == "" {
		var err error
		if t, err = f.target(); err != nil {
			return decode.Decoder{}, err
		}
	}
	return f.DecoderFor(t)
}

// DecoderFor is the decode.Decoder the flags describe for the source of t
// (nil: none): --encryption-config, else the encryption config found with
// t.
func (f *DecodeFlags) DecoderFor(t *Target) (decode.Decoder, error) {
	d := decode.Decoder{ShowSecrets: f.showSecrets, ShowManagedFields: f.showManagedFields}
	path, what := f.EncryptionConfig, "--encryption-config"
	if path == "" && t != nil && t.EncryptionConfig != "" {
		path, what = t.EncryptionConfig, "encryption config of "+t.Description
	}
	if path == "" {
		return d, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return d, fmt.Errorf("%s: %w", what, err)
	}
	if d.Encryption, err = decode.ParseEncryptionConfig(data); err != nil {
		return d, fmt.Errorf("%s %s: %w", what, path, err)
	}
	return d, nil
}
