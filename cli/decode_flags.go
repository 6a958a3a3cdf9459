package cli

import (
	"fmt"
	"os"

	"github.com/etcdscope/etcdscope/decode"
	"github.com/spf13/pflag"
)

// decodeFlags say how values are shown, on every command that prints them.
type decodeFlags struct {
	showSecrets       bool
	showManagedFields bool
	encryptionConfig  string
}

func (f *decodeFlags) register(fs *pflag.FlagSet) {
	fs.BoolVar(&f.showSecrets, "show-secrets", false, "show Secret data instead of <N bytes>")
	fs.BoolVar(&f.showManagedFields, "show-managed-fields", false, "keep metadata.managedFields in the output")
	fs.StringVar(&f.encryptionConfig, "encryption-config", "", "kube-apiserver's EncryptionConfiguration file, to decrypt aescbc, aesgcm and secretbox values; in bundled mode the control plane's kube-apiserver also encrypts with it")
}

// decoder is the decode.Decoder the flags describe.
func (f *decodeFlags) decoder() (decode.Decoder, error) {
	d := decode.Decoder{ShowSecrets: f.showSecrets, ShowManagedFields: f.showManagedFields}
	if f.encryptionConfig == "" {
		return d, nil
	}
	data, err := os.ReadFile(f.encryptionConfig)
	if err != nil {
		return d, fmt.Errorf("--encryption-config: %w", err)
	}
	if d.Encryption, err = decode.ParseEncryptionConfig(data); err != nil {
		return d, fmt.Errorf("--encryption-config %s: %w", f.encryptionConfig, err)
	}
	return d, nil
}
