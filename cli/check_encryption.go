package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/dustin/go-humanize/english"
	"github.com/etcdscope/etcdscope/cli/cmdutil"
	"github.com/etcdscope/etcdscope/decode"
	"github.com/etcdscope/etcdscope/etcdview"
	"github.com/etcdscope/etcdscope/etcdview/encryption"
	"github.com/spf13/cobra"
)

// encryptionCheck is `check encryption`: how each resource's values are
// stored at rest, against the write key of the encryption config
// (--encryption-config, or the one found with the source).
func encryptionCheck(conn *cmdutil.ConnFlags) checkSpec {
	return checkSpec{
		name:  "encryption",
		short: "Count each resource's values by provider and key, and fail when the encryption config's write key does not cover some",
		long: `check encryption reads every value below /registry, keeping only the prefix
that says how it is stored at rest (plain, aescbc, aesgcm, secretbox, KMS v1 or
v2 and the key or plugin name), and counts them by resource. Against the
encryption config (--encryption-config, or the one found with the node's
kube-apiserver) it says which values are under the write key and which are not:
plain values where the config encrypts, older keys it still reads, keys it no
longer has (kube-apiserver cannot read those), encrypted values where it writes
plain; with a line of guidance for each. It exits with status 1 when values
remain that the write key does not cover.

Without a config it reports what is stored and passes: it cannot know what
kube-apiserver writes with (without --encryption-provider-config it writes
plain).`,
		flags: func(cmd *cobra.Command) { conn.Decoding.RegisterEncryptionConfig(cmd.Flags()) },
		run: func(ctx context.Context, _ *cobra.Command, src etcdview.Source) (checkReport, error) {
			dec, err := conn.Decoding.Decoder()
			if err != nil {
				return nil, err
			}
			from := conn.Decoding.EncryptionConfig
			if from == "" && dec.Encryption != nil {
				if t, err := conn.Target(ctx); err == nil {
					from = t.EncryptionConfig
				}
			}
			r, err := encryption.Run(ctx, src, encryption.Options{Config: dec.Encryption})
			if err != nil {
				return nil, err
			}
			return encryptionReport{Report: r, config: from}, nil
		},
	}
}

// encryptionReport is check encryption's report.
type encryptionReport struct {
	*encryption.Report
	config string // the encryption config's path; "" without one
}

func (r encryptionReport) Summary() string {
	resources := 0
	for _, res := range r.Resources {
		for _, s := range res.Stored {
			if s.Status == encryption.Older || s.Status == encryption.Unreadable {
				resources++
				break
			}
		}
	}
	switch {
	case !r.Config:
		encrypted := r.Values - r.identity()
		return fmt.Sprintf("encryption: %d values, %d of them encrypted; no encryption config, so the write key is not known", r.Values, encrypted)
	case r.Failed():
		older, unreadable := r.Count(encryption.Older), r.Count(encryption.Unreadable)
		var parts []string
		if older > 0 {
			parts = append(parts, fmt.Sprintf("%d to rewrite", older))
		}
		if unreadable > 0 {
			parts = append(parts, fmt.Sprintf("%d kube-apiserver cannot read", unreadable))
		}
		return fmt.Sprintf("encryption: %d of %d values are not under the write key (%s), in %s",
			older+unreadable, r.Values, strings.Join(parts, ", "), fmt.Sprintf("%d %s", resources, english.PluralWord(resources, "resource", "")))
	}
	return fmt.Sprintf("encryption: all %d values are under the write key of their resource", r.Values)
}

// identity is the values stored plain.
func (r encryptionReport) identity() int64 {
	var n int64
	for _, res := range r.Resources {
		for _, s := range res.Stored {
			if s.Provider == encryption.Identity {
				n += s.Count
			}
		}
	}
	return n
}

func (r encryptionReport) WriteText(w io.Writer, p cmdutil.Palette) error {
	against := "with no encryption config"
	if r.config != "" {
		against = "against the encryption config " + p.Text(r.config)
	}
	fmt.Fprintf(w, "%s of %s at revision %d, %s\n", p.Bold("ENCRYPTION AT REST"), p.Text(r.Prefix), r.Revision, against)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RESOURCE\tWRITES WITH\tSTORED AS\tVALUES\tSTATUS")
	for _, res := range r.Resources {
		name, writes := p.Cell(res.Name()), p.Cell(res.WritesWith)
		if !r.Config {
			writes = "?"
		}
		for _, s := range res.Stored {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", name, writes, p.Cell(s.Label), s.Count, s.Status)
			name, writes = "", ""
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(r.Unlisted) > 0 {
		fmt.Fprintf(w, "past %d rows, values not listed by resource: %s\n", encryption.MaxRows, unlisted(r.Unlisted))
	}
	if r.Other > 0 {
		fmt.Fprintf(w, "%d keys below %s hold no object and were not counted\n", r.Other, p.Text(r.Prefix))
	}
	fmt.Fprintln(w)
	if !r.Config {
		fmt.Fprintln(w, "GUIDANCE: without the encryption config etcdscope cannot say what kube-apiserver writes with; give --encryption-config (kube-apiserver's --encryption-provider-config) to check the values against its write key")
		fmt.Fprintln(w, p.Text(r.Summary()))
		return nil
	}
	findings := r.Findings()
	if len(findings) == 0 {
		fmt.Fprintln(w, "GUIDANCE: nothing to do, every value is under its write key")
	} else {
		fmt.Fprintln(w, "GUIDANCE")
	}
	for _, f := range findings {
		fmt.Fprintf(w, "%s: %s\n", p.Bold(f.Resource), p.Text(f.Text))
		keys := make([]string, len(f.Stored.Keys))
		for i, k := range f.Stored.Keys {
			keys[i] = decode.EscapeKey(k)
		}
		more := ""
		if n := f.Stored.Count - int64(len(keys)); n > 0 {
			more = fmt.Sprintf(" and %d more", n)
		}
		fmt.Fprintf(w, "  %s%s\n", p.Text(strings.Join(keys, ", ")), more)
	}
	fmt.Fprintln(w, p.Text(r.Summary()))
	return nil
}

func unlisted(by map[encryption.Status]int64) string {
	var parts []string
	for _, st := range []encryption.Status{encryption.Written, encryption.Older, encryption.Unreadable, encryption.Unknown} {
		if n := by[st]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, st))
		}
	}
	return strings.Join(parts, ", ")
}

// encryptionDoc is check encryption in -o json.
type encryptionDoc struct {
	Prefix    string             `json:"prefix"`
	Revision  int64              `json:"revision"`
	Config    string             `json:"encryptionConfig,omitempty"`
	Failed    bool               `json:"failed"`
	Values    int64              `json:"values"`
	Other     int64              `json:"otherKeys"`
	ByStatus  map[string]int64   `json:"byStatus"`
	Resources []encryptionResDoc `json:"resources"`
	Findings  []encryptionFinDoc `json:"findings"`
	Summary   string             `json:"summary"`
}

type encryptionResDoc struct {
	Group      string             `json:"group"`
	Resource   string             `json:"resource"`
	WritesWith *string            `json:"writesWith"` // null without a config
	Stored     []encryptionRowDoc `json:"stored"`
}

type encryptionRowDoc struct {
	Label    string   `json:"label"`
	Provider string   `json:"provider"`
	Version  string   `json:"version,omitempty"`
	Key      string   `json:"key,omitempty"`
	Count    int64    `json:"count"`
	Status   string   `json:"status"`
	Keys     []string `json:"keys"`
}

type encryptionFinDoc struct {
	Resource string   `json:"resource"`
	Label    string   `json:"label"`
	Status   string   `json:"status"`
	Count    int64    `json:"count"`
	Keys     []string `json:"keys"`
	Guidance string   `json:"guidance"`
}

func (r encryptionReport) Doc() any {
	d := encryptionDoc{Prefix: r.Prefix, Revision: r.Revision, Config: r.config, Failed: r.Failed(),
		Values: r.Values, Other: r.Other, ByStatus: map[string]int64{}, Resources: []encryptionResDoc{},
		Findings: []encryptionFinDoc{}, Summary: r.Summary()}
	for _, st := range []encryption.Status{encryption.Written, encryption.Older, encryption.Unreadable, encryption.Unknown} {
		if n := r.Count(st); n > 0 {
			d.ByStatus[string(st)] = n
		}
	}
	for _, res := range r.Resources {
		rd := encryptionResDoc{Group: res.Group, Resource: res.Resource}
		if r.Config {
			rd.WritesWith = &res.WritesWith
		}
		for _, s := range res.Stored {
			rd.Stored = append(rd.Stored, encryptionRowDoc{Label: s.Label, Provider: s.Provider, Version: s.Version,
				Key: s.KeyName, Count: s.Count, Status: string(s.Status), Keys: s.Keys})
		}
		d.Resources = append(d.Resources, rd)
	}
	for _, f := range r.Findings() {
		d.Findings = append(d.Findings, encryptionFinDoc{Resource: f.Resource, Label: f.Stored.Label,
			Status: string(f.Stored.Status), Count: f.Stored.Count, Keys: f.Stored.Keys, Guidance: f.Text})
	}
	return d
}
