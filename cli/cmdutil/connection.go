package cmdutil

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/etcdscope/etcdscope/cli/clusters"
	"github.com/etcdscope/etcdscope/embedded"
	"github.com/etcdscope/etcdscope/etcdview"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"
)

// ConnFlags are etcdctl's connection flags. Each also reads the ETCDCTL_*
// variable etcdctl reads (ETCDCTL_ENDPOINTS for --endpoints, ...); a flag given
// on the command line wins over its variable.
type ConnFlags struct {
	Endpoints          []string
	CACert, Cert, Key  string
	insecureSkipVerify bool
	user, password     string
	dialTimeout        time.Duration
	CommandTimeout     time.Duration
	DB                 string
	dbIndex            bool
	DataDir            string
	// HostRoot is where the node's files are, for discovery ("/" on the
	// node, /host in kubectl debug node/NAME --profile=sysadmin);
	// hostRootGiven says the command line gave it.
	HostRoot      string
	hostRootGiven bool
	// Decoding is how values read from the source are decoded; commands
	// that print values register its flags.
	Decoding DecodeFlags
	// FromEnv holds the flags an ETCDCTL_* variable set, by flag name.
	FromEnv map[string]string
	// errOut is the running command's stderr, where it says which etcd it
	// reads when no flag named it.
	errOut io.Writer
	// cluster is --cluster, a name from the config file; clusterEncryption
	// its encryption config.
	cluster, clusterEncryption string
	// noPrompt refuses a --user without password instead of asking for
	// it: :ctx opens clusters while the UI holds the terminal.
	noPrompt bool
	// StartBundled is the explorer's --bundled: start the bundled cluster
	// whatever runs or is found.
	StartBundled bool
	// target is what the flags resolved to, once (Target).
	target    *Target
	targetErr error
}

func (f *ConnFlags) register(fs *pflag.FlagSet) {
	fs.StringSliceVar(&f.Endpoints, "endpoints", nil, "etcd client URLs (http, https, unix or unixs: kine's socket) or host:port, comma-separated (ETCDCTL_ENDPOINTS)")
	fs.StringVar(&f.CACert, "cacert", "", "verify the server with this CA bundle (ETCDCTL_CACERT)")
	fs.StringVar(&f.Cert, "cert", "", "client certificate file (ETCDCTL_CERT)")
	fs.StringVar(&f.Key, "key", "", "client key file (ETCDCTL_KEY)")
	fs.BoolVar(&f.insecureSkipVerify, "insecure-skip-tls-verify", false, "use TLS without verifying the server certificate (ETCDCTL_INSECURE_SKIP_TLS_VERIFY)")
	fs.StringVar(&f.user, "user", "", "etcd user, as name or name:password (ETCDCTL_USER)")
	fs.StringVar(&f.password, "password", "", "password of --user (ETCDCTL_PASSWORD)")
	fs.DurationVar(&f.dialTimeout, "dial-timeout", etcdview.DefaultDialTimeout, "how long to wait for a connection (ETCDCTL_DIAL_TIMEOUT)")
	fs.DurationVar(&f.CommandTimeout, "command-timeout", etcdview.DefaultCommandTimeout, "how long each request may take (ETCDCTL_COMMAND_TIMEOUT)")
	fs.StringVar(&f.DB, "db", "", "read an offline data file instead of a live etcd: etcd's (member/snap/db or a snapshot) or kine's SQLite file (k3s' server/db/state.db); a recording in PostgreSQL: postgres://...?cluster=NAME")
	fs.BoolVar(&f.dbIndex, "db-index", true, "keep the --db file's key index for the next command, beside it as FILE.etcdscope-index or in the cache directory (false: build it in memory and write nothing)")
	fs.StringVar(&f.HostRoot, "host-root", "/", "where the node's files are, to find its etcd when no flag names one (kubectl debug node/NAME --profile=sysadmin mounts the node at /host); given, only the node's etcd is read")
	fs.StringVar(&f.cluster, "cluster", "", "read the cluster of this name in the config file, ${XDG_CONFIG_HOME:-~/.config}/etcdscope/config.yaml (a connection flag given as well wins over its field)")
	fs.StringVar(&f.DataDir, "data-dir", "", "the bundled cluster's data dir: the explorer and serve start it there (default: a temporary directory removed on exit); other commands read the bundled cluster running there")
}

// envFlags are the flags etcdctl also reads from the environment.
var envFlags = []string{
	"endpoints", "cacert", "cert", "key", "insecure-skip-tls-verify",
	"user", "password", "dial-timeout", "command-timeout",
}

// clusterEnv are the variables a --cluster names instead: they would
// point a named cluster's connection at another etcd. The password and
// timeouts still apply.
var clusterEnv = []string{"endpoints", "cacert", "cert", "key", "insecure-skip-tls-verify", "user"}

// envName is etcdctl's variable for flag name: ETCDCTL_CACERT for cacert.
func envName(name string) string {
	return "ETCDCTL_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// applyEnv sets each unset flag but those in skip from its ETCDCTL_*
// variable, as etcdctl does, and returns the flags it set.
func applyEnv(fs *pflag.FlagSet, skip []string) (map[string]string, error) {
	set := map[string]string{}
	for _, name := range envFlags {
		env := envName(name)
		v, ok := os.LookupEnv(env)
		fl := fs.Lookup(name)
		if !ok || fl == nil || fl.Changed || slices.Contains(skip, name) {
			continue
		}
		if err := fl.Value.Set(v); err != nil {
			return nil, fmt.Errorf("%s=%q: %w", env, v, err)
		}
		set[name] = env
	}
	return set, nil
}

// nonEmpty are the connection flags that name something, and what to give
// instead of nothing: an empty value is a variable a script forgot to set,
// and must not quietly mean "the default".
var nonEmpty = []struct{ flag, give string }{
	{"endpoints", "host:port or a URL"},
	{"db", "the path of an etcd data file"},
	{"cacert", "a CA file"},
	{"cert", "a certificate file"},
	{"key", "a key file"},
	{"user", "name or name:password"},
	{"data-dir", "a directory"},
	{"cluster", "a name from the config file"},
	{"host-root", "a directory"},
}

// checkEmpty refuses a connection flag, or its variable, given empty; an
// --endpoints list with an empty entry ("a,,b") too.
func (f *ConnFlags) checkEmpty(fs *pflag.FlagSet) error {
	for _, n := range nonEmpty {
		fl := fs.Lookup(n.flag)
		env, fromEnv := f.FromEnv[n.flag]
		if fl == nil || !fl.Changed && !fromEnv {
			continue
		}
		what := "--" + n.flag
		if fromEnv {
			what = env
		}
		values := []string{fl.Value.String()}
		if sv, ok := fl.Value.(pflag.SliceValue); ok {
			values = sv.GetSlice()
		}
		blank := 0
		for _, v := range values {
			if strings.TrimSpace(v) == "" {
				blank++
			}
		}
		switch {
		case blank == len(values):
			return fmt.Errorf("%s is empty: give %s", what, n.give)
		case blank > 0:
			return fmt.Errorf("%s has an empty entry (%q): give %s", what, strings.Join(values, ","), n.give)
		}
	}
	return nil
}

// SourceKind is where the data comes from.
type SourceKind int

const (
	BundledSource SourceKind = iota
	LiveSource
	FileSource
)

func (f *ConnFlags) Kind() (SourceKind, error) {
	switch {
	case len(f.Endpoints) > 0 && f.DB != "":
		return 0, fmt.Errorf("--endpoints and --db name two sources: give one")
	case len(f.Endpoints) > 0:
		return LiveSource, nil
	case f.DB != "":
		return FileSource, nil
	}
	return BundledSource, nil
}

// OtherSource is the flag that names a source other than the bundled
// cluster (--endpoints, or ETCDCTL_ENDPOINTS, --db, --host-root given,
// --cluster), "" when none does: serve and --bundled refuse one rather
// than leave it unread.
func (f *ConnFlags) OtherSource() string {
	switch {
	case len(f.Endpoints) > 0:
		if env, ok := f.FromEnv["endpoints"]; ok {
			return env
		}
		return "--endpoints"
	case f.DB != "":
		return "--db"
	case f.hostRootGiven:
		return "--host-root"
	case f.cluster != "":
		return "--cluster"
	}
	return ""
}

// etcdConfig is the live connection the flags describe. A --user without a
// password asks for one on the terminal, as etcdctl does.
func (f *ConnFlags) etcdConfig() (etcdview.Config, error) {
	if err := etcdview.CheckTimeouts(f.dialTimeout, f.CommandTimeout); err != nil {
		return etcdview.Config{}, err
	}
	cfg := etcdview.Config{
		Endpoints:          f.Endpoints,
		CACert:             f.CACert,
		Cert:               f.Cert,
		Key:                f.Key,
		InsecureSkipVerify: f.insecureSkipVerify,
		DialTimeout:        f.dialTimeout,
		CommandTimeout:     f.CommandTimeout,
	}
	var err error
	cfg.Username, cfg.Password, err = f.credentials()
	return cfg, err
}

// credentials are --user and --password; a --user without a password asks
// for one on the terminal, as etcdctl does.
func (f *ConnFlags) credentials() (user, password string, err error) {
	if f.user == "" || f.password != "" {
		return f.user, f.password, nil
	}
	name, pass, ok := strings.Cut(f.user, ":")
	switch {
	case ok:
		return name, pass, nil
	case f.noPrompt:
		return name, "", fmt.Errorf("no password for user %q: give --password or ETCDCTL_PASSWORD, or start etcdscope --cluster %s, which asks for it", name, f.cluster)
	}
	pass, err = promptPassword(name)
	return name, pass, err
}

func promptPassword(user string) (string, error) {
	fd := int(os.Stdin.Fd())
	if !term.IsTerminal(fd) {
		return "", fmt.Errorf("no password for user %q: use --user %s:PASSWORD or --password", user, user)
	}
	fmt.Fprint(os.Stderr, "Password: ")
	b, err := term.ReadPassword(fd)
	fmt.Fprintln(os.Stderr)
	if err != nil {
		return "", fmt.Errorf("read password: %w", err)
	}
	return string(b), nil
}

// PersistentConn registers the connection flags on root so every subcommand
// takes them, and applies the ETCDCTL_* variables before any command runs.
func PersistentConn(root *cobra.Command) *ConnFlags {
	f := &ConnFlags{}
	f.register(root.PersistentFlags())
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) (err error) {
		var skip []string
		if f.cluster != "" {
			if err := f.applyCluster(cmd.Flags()); err != nil {
				return err
			}
			skip = clusterEnv
		}
		if f.FromEnv, err = applyEnv(cmd.Flags(), skip); err != nil {
			return err
		}
		f.errOut = cmd.ErrOrStderr()
		f.hostRootGiven = cmd.Flags().Changed("host-root")
		// The decoder decrypts with the encryption config found with the
		// source, so it resolves the source the command will read.
		f.Decoding.target = func() (*Target, error) { return f.Target(cmd.Context()) }
		return f.checkEmpty(cmd.Flags())
	}
	return f
}

// applyCluster fills the connection from --cluster's entry in the config
// file, as flags would, but for the flags given on the command line. The
// entry's source (endpoints or db) is one: --endpoints or --db given
// replaces it whole.
func (f *ConnFlags) applyCluster(fs *pflag.FlagSet) error {
	cl, err := clusters.Named(f.cluster)
	if err != nil {
		return err
	}
	if !fs.Changed("endpoints") && !fs.Changed("db") {
		f.Endpoints, f.DB = cl.Endpoints, cl.DB
	}
	for _, v := range []struct {
		flag       string
		dst        *string
		fromConfig string
	}{{"cacert", &f.CACert, cl.CACert}, {"cert", &f.Cert, cl.Cert}, {"key", &f.Key, cl.Key}, {"user", &f.user, cl.User}} {
		if !fs.Changed(v.flag) && v.fromConfig != "" {
			*v.dst = v.fromConfig
		}
	}
	f.clusterEncryption = cl.EncryptionConfig
	return nil
}

// ExportLine is the shell line that points etcdctl (and etcdscope) at
// endpoints, with the TLS files of tls that are set (tls may be nil).
func ExportLine(endpoints []string, tls *embedded.TLSFiles) string {
	return "export " + strings.Join(ExportVars(endpoints, tls), " ")
}

// ExportVars are ExportLine's assignments.
func ExportVars(endpoints []string, tls *embedded.TLSFiles) []string {
	vars := []string{"ETCDCTL_ENDPOINTS=" + ShellQuote(strings.Join(endpoints, ","))}
	if tls != nil {
		for _, v := range []struct{ flag, path string }{{"cacert", tls.CA}, {"cert", tls.Cert}, {"key", tls.Key}} {
			if v.path != "" {
				vars = append(vars, envName(v.flag)+"="+ShellQuote(v.path))
			}
		}
	}
	return vars
}

// ShellQuote leaves plain paths and endpoint lists alone and single-quotes
// the rest, so that a --data-dir with spaces still pastes into a shell.
func ShellQuote(s string) string {
	if strings.IndexFunc(s, func(r rune) bool {
		return !(strings.ContainsRune("/.-_:,", r) || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
