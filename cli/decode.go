package cli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/etcdscope/etcdscope/cli/cmdutil"
	"github.com/etcdscope/etcdscope/decode"
)

// newDecodeCmd is `etcdscope decode`: one raw etcd value on stdin, as
// `etcdctl get --print-value-only` prints it, decoded like auger's decode.
func newDecodeCmd() *cobra.Command {
	var (
		output   *cmdutil.PrintFlags
		key      string
		metaOnly bool
		show     cmdutil.DecodeFlags
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
			pr, err := output.ToPrinter(cmd)
			if err != nil {
				return err
			}
			d, err := show.Decoder()
			if err != nil {
				return err
			}
			return decodeValue(pr, cmd.InOrStdin(), d, key, metaOnly)
		},
	}
	f := cmd.Flags()
	output = cmdutil.AddPrintFlags(cmd, decode.OutputYAML, "output format: yaml, json or proto (the storage encoding)",
		decode.OutputYAML, decode.OutputJSON, decode.OutputProto)
	f.BoolVar(&metaOnly, "meta-only", false, "print only apiVersion, kind and metadata")
	f.StringVar(&key, "key", "", "the etcd key the value was read from (names the resource; aesgcm needs it to decrypt)")
	show.Register(f)
	return cmd
}

// decodeValue decodes the value in r and prints it as output: on a
// terminal inert, -o proto included (binary has no business there either);
// to a pipe exact.
func decodeValue(s cmdutil.Printer, r io.Reader, d decode.Decoder, key string, metaOnly bool) error {
	value, err := readValue(r)
	if err != nil {
		return err
	}
	o := d.Decode(key, value)
	out, err := decode.Render(o, s.Output, metaOnly)
	if err != nil {
		return err
	}
	w := s.P.Writer(s.Out)
	if _, err := w.Write(out); err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if o.Problem != "" {
		fmt.Fprintln(s.ErrOut, s.EP.Text("warning: "+o.Problem))
	}
	return nil
}

// maxValueBytes bounds what decode reads from stdin. etcd refuses a request
// larger than --max-request-bytes (1.5 MiB by default) and warns against
// setting it above 10 MiB; kube-apiserver refuses a body over 3 MiB. Four
// times etcd's most is past any value a cluster holds, and stops
// `decode < /dev/zero` long before it fills memory.
const maxValueBytes = 40 << 20

// readValue reads one value, all of r up to maxValueBytes.
func readValue(r io.Reader) ([]byte, error) {
	value, err := io.ReadAll(io.LimitReader(r, maxValueBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read value from stdin: %w", err)
	}
	if len(value) > maxValueBytes {
		return nil, fmt.Errorf("stdin holds more than %d MiB, more than one etcd value can be (etcd refuses a request over --max-request-bytes, 1.5 MiB by default): give one value, as etcdctl get --print-value-only prints it", maxValueBytes>>20)
	}
	return value, nil
}
