package cli

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/etcdscope/etcdscope/embedded"
	"github.com/etcdscope/etcdscope/etcdview"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"
)

// connFlags are etcdctl's connection flags. Each also reads the ETCDCTL_*
// variable etcdctl reads (ETCDCTL_ENDPOINTS for --endpoints, ...); a flag given
// on the command line wins over its variable.
type connFlags struct {
	endpoints          []string
	cacert, cert, key  string
	insecureSkipVerify bool
	user, password     string
	dialTimeout        time.Duration
	commandTimeout     time.Duration
	db                 string
	dbIndex            bool
	dataDir            string
	// decoding is how values read from the source are decoded; commands
	// that print values register its flags.
	decoding decodeFlags
	// fromEnv holds the flags an ETCDCTL_* variable set, by flag name.
	fromEnv map[string]string
	// errOut is the running command's stderr, where it says which etcd it
	// reads when no flag named it.
	errOut io.Writer
}

func (f *connFlags) register(fs *pflag.FlagSet) {
	fs.StringSliceVar(&f.endpoints, "endpoints", nil, "etcd client URLs or host:port, comma-separated (ETCDCTL_ENDPOINTS)")
	fs.StringVar(&f.cacert, "cacert", "", "verify the server with this CA bundle (ETCDCTL_CACERT)")
	fs.StringVar(&f.cert, "cert", "", "client certificate file (ETCDCTL_CERT)")
	fs.StringVar(&f.key, "key", "", "client key file (ETCDCTL_KEY)")
	fs.BoolVar(&f.insecureSkipVerify, "insecure-skip-tls-verify", false, "use TLS without verifying the server certificate (ETCDCTL_INSECURE_SKIP_TLS_VERIFY)")
	fs.StringVar(&f.user, "user", "", "etcd user, as name or name:password (ETCDCTL_USER)")
	fs.StringVar(&f.password, "password", "", "password of --user (ETCDCTL_PASSWORD)")
	fs.DurationVar(&f.dialTimeout, "dial-timeout", etcdview.DefaultDialTimeout, "how long to wait for a connection (ETCDCTL_DIAL_TIMEOUT)")
	fs.DurationVar(&f.commandTimeout, "command-timeout", etcdview.DefaultCommandTimeout, "how long each request may take (ETCDCTL_COMMAND_TIMEOUT)")
	fs.StringVar(&f.db, "db", "", "read an offline etcd data file (member/snap/db or a snapshot) instead of a live etcd")
	fs.BoolVar(&f.dbIndex, "db-index", true, "keep the --db file's key index for the next command, beside it as FILE.etcdscope-index or in the cache directory (false: build it in memory and write nothing)")
	fs.StringVar(&f.dataDir, "data-dir", "", "the bundled cluster's data dir: the explorer and serve start it there (default: a temporary directory removed on exit); other commands read the bundled cluster running there")
}

// envFlags are the flags etcdctl also reads from the environment.
var envFlags = []string{
	"endpoints", "cacert", "cert", "key", "insecure-skip-tls-verify",
	"user", "password", "dial-timeout", "command-timeout",
}

// envName is etcdctl's variable for flag name: ETCDCTL_CACERT for cacert.
func envName(name string) string {
	return "ETCDCTL_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// applyEnv sets each unset flag from its ETCDCTL_* variable, as etcdctl
// does, and returns the flags it set.
func applyEnv(fs *pflag.FlagSet) (map[string]string, error) {
	set := map[string]string{}
	for _, name := range envFlags {
		env := envName(name)
		v, ok := os.LookupEnv(env)
		fl := fs.Lookup(name)
		if !ok || fl == nil || fl.Changed {
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
}

// checkEmpty refuses a connection flag, or its variable, given empty; an
// --endpoints list with an empty entry ("a,,b") too.
func (f *connFlags) checkEmpty(fs *pflag.FlagSet) error {
	for _, n := range nonEmpty {
		fl := fs.Lookup(n.flag)
		env, fromEnv := f.fromEnv[n.flag]
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

// sourceKind is where the data comes from.
type sourceKind int

const (
	bundledSource sourceKind = iota
	liveSource
	fileSource
)

func (f *connFlags) kind() (sourceKind, error) {
	switch {
	case len(f.endpoints) > 0 && f.db != "":
		return 0, fmt.Errorf("--endpoints and --db name two sources: give one")
	case len(f.endpoints) > 0:
		return liveSource, nil
	case f.db != "":
		return fileSource, nil
	}
	return bundledSource, nil
}

// etcdConfig is the live connection the flags describe. A --user without a
// password asks for one on the terminal, as etcdctl does.
func (f *connFlags) etcdConfig() (etcdview.Config, error) {
	if err := etcdview.CheckTimeouts(f.dialTimeout, f.commandTimeout); err != nil {
		return etcdview.Config{}, err
	}
	cfg := etcdview.Config{
		Endpoints:          f.endpoints,
		CACert:             f.cacert,
		Cert:               f.cert,
		Key:                f.key,
		InsecureSkipVerify: f.insecureSkipVerify,
		DialTimeout:        f.dialTimeout,
		CommandTimeout:     f.commandTimeout,
	}
	if f.user == "" {
		return cfg, nil
	}
	cfg.Username, cfg.Password = f.user, f.password
	if f.password == "" {
		name, pass, ok := strings.Cut(f.user, ":")
		if ok {
			cfg.Username, cfg.Password = name, pass
		} else {
			p, err := promptPassword(name)
			if err != nil {
				return cfg, err
			}
			cfg.Password = p
		}
	}
	return cfg, nil
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

// persistentConn registers the connection flags on root so every subcommand
// takes them, and applies the ETCDCTL_* variables before any command runs.
func persistentConn(root *cobra.Command) *connFlags {
	f := &connFlags{}
	f.register(root.PersistentFlags())
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) (err error) {
		if f.fromEnv, err = applyEnv(cmd.Flags()); err != nil {
			return err
		}
		f.errOut = cmd.ErrOrStderr()
		return f.checkEmpty(cmd.Flags())
	}
	return f
}

// exportLine is the shell line that points etcdctl (and etcdscope) at
// endpoints, with the TLS files of tls that are set (tls may be nil).
func exportLine(endpoints []string, tls *embedded.TLSFiles) string {
	return "export " + strings.Join(exportVars(endpoints, tls), " ")
}

// exportVars are exportLine's assignments.
func exportVars(endpoints []string, tls *embedded.TLSFiles) []string {
	vars := []string{"ETCDCTL_ENDPOINTS=" + shellQuote(strings.Join(endpoints, ","))}
	if tls != nil {
		for _, v := range []struct{ flag, path string }{{"cacert", tls.CA}, {"cert", tls.Cert}, {"key", tls.Key}} {
			if v.path != "" {
				vars = append(vars, envName(v.flag)+"="+shellQuote(v.path))
			}
		}
	}
	return vars
}

// shellQuote leaves plain paths and endpoint lists alone and single-quotes
// the rest, so that a --data-dir with spaces still pastes into a shell.
func shellQuote(s string) string {
	if strings.IndexFunc(s, func(r rune) bool {
		return !(strings.ContainsRune("/.-_:,", r) || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
