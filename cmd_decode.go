package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/etcdscope/etcdscope/decode"
)

// newDecodeCmd is `etcdscope decode`: one raw etcd value on stdin, as
// `etcdctl get --print-value-only` prints it, decoded like auger's decode.
func newDecodeCmd() *cobra.Command {
	var (
		output, key string
		metaOnly    bool
		show        decodeFlags
	)
	cmd := &cobra.Command{
		Use:   "decode [-o yaml|json|proto] [--meta-only] [--key KEY] < value",
		Short: "Decode one etcd value written by kube-apiserver, read from stdin",
		Long: `Decode one etcd value written by kube-apiserver: protobuf, JSON or CBOR, or
encrypted at rest (decrypted with --encryption-config, kube-apiserver's
EncryptionConfiguration file). Secret data is masked unless --show-secrets.
Exits 1 when the input holds no Kubernetes object at all.`,
		Example: `  etcdctl get --print-value-only /registry/pods/default/web-0 | etcdscope decode
  etcdctl get --print-value-only /registry/secrets/default/db \
    | etcdscope decode --key /registry/secrets/default/db --encryption-config enc.yaml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			value, err := io.ReadAll(cmd.InOrStdin())
			if err != nil {
				return fmt.Errorf("read value from stdin: %w", err)
			}
			d, err := show.decoder()
			if err != nil {
				return err
			}
			o := d.Decode(key, value)
			out, err := decode.Render(o, output, metaOnly)
			if err != nil {
				return err
			}
			if _, err := cmd.OutOrStdout().Write(out); err != nil {
				return err
			}
			if o.Problem != "" {
				fmt.Fprintf(cmd.ErrOrStderr(), "warning: %s\n", o.Problem)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVarP(&output, "output", "o", decode.OutputYAML, "output format: yaml, json or proto (the storage encoding)")
	f.BoolVar(&metaOnly, "meta-only", false, "print only apiVersion, kind and metadata")
	f.StringVar(&key, "key", "", "the etcd key the value was read from (names the resource; aesgcm needs it to decrypt)")
	show.register(f)
	return cmd
}
