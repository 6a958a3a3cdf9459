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
}

func (f *DecodeFlags) Register(fs *pflag.FlagSet) {
	fs.BoolVar(&f.showSecrets, "show-secrets", false, "show Secret data instead of <N bytes>")
	fs.BoolVar(&f.showManagedFields, "show-managed-fields", false, "keep metadata.managedFields in the output")
	fs.StringVar(&f.EncryptionConfig, "encryption-config", "", "kube-apiserver's EncryptionConfiguration file, to decrypt aescbc, aesgcm and secretbox values; in bundled mode the control plane's kube-apiserver also encrypts with it")
}

// Decoder is the decode.Decoder the flags describe.
func (f *DecodeFlags) Decoder() (decode.Decoder, error) {
	d := decode.Decoder{ShowSecrets: f.showSecrets, ShowManagedFields: f.showManagedFields}
	if f.EncryptionConfig == "" {
		return d, nil
	}
	data, err := os.ReadFile(f.EncryptionConfig)
	if err != nil {
		return d, fmt.Errorf("--encryption-config: %w", err)
	}
	if d.Encryption, err = decode.ParseEncryptionConfig(data); err != nil {
		return d, fmt.Errorf("--encryption-config %s: %w", f.EncryptionConfig, err)
	}
	return d, nil
}
