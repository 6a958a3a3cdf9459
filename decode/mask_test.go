package decode

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/etcdscope/etcdscope/decode/masktest"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const (
	applyPassword = "correct horse battery staple"
	applyToken    = "tok-3f9a1c77e2b4"
	otherPassword = "Tr0ub4dor&3-other"
)

// appliedSecret is a Secret as `kubectl apply` of a manifest with
// stringData stores it: the values merged into data, and the manifest,
// stringData and all, in the last-applied annotation; plus another
// tool's copy of a manifest and an annotation that looks like one.
func appliedSecret(lastApplied string) *corev1.Secret {
	return &corev1.Secret{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: "lab-credentials", Namespace: "lab", Annotations: map[string]string{
			LastAppliedAnnotation:  lastApplied,
			"example.com/manifest": `{"data":{"other":"` + base64.StdEncoding.EncodeToString([]byte(otherPassword)) + `"}}`,
			"example.com/owner":    "team-a",
		}},
		Data: map[string][]byte{"password": []byte(applyPassword), "token": []byte(applyToken)},
		Type: corev1.SecretTypeOpaque,
	}
}

const lastApplied = `{"apiVersion":"v1","kind":"Secret","metadata":{"annotations":{},"name":"lab-credentials","namespace":"lab"},"stringData":{"password":"` +
	applyPassword + `"},"data":{"token":"dG9rLTNmOWExYzc3ZTJiNA=="},"type":"Opaque"}` + "\n"

// renderings is every way decode prints o.
func renderings(t *testing.T, o Object) map[string]string {
	t.Helper()
	out := map[string]string{"text": o.Text(), "meta": o.MetaYAML(), "label": o.Label(), "problem": o.Problem}
	for _, s := range o.Sections {
		out["section "+s.Name] += s.Text
	}
	if js, err := o.JSON(false); err == nil {
		out["json"] = string(js)
	}
	if js, err := o.AppendJSON(nil, "  "); err == nil {
		out["list json"] = string(js)
	}
	if y, err := o.AppendYAMLItem(nil); err == nil {
		out["list yaml"] = string(y)
	}
	if b, err := Render(o, OutputProto, false); err == nil {
		out["proto"] = string(b)
	}
	return out
}

func TestMaskLeavesNoByteOfASecretsValues(t *testing.T) {
	values := []string{applyPassword, applyToken, otherPassword}
	for _, tt := range []struct{ name, lastApplied, annotationHas string }{
		{"applied with stringData", lastApplied, `"stringData":{"password":"<28 bytes>"}`},
		{"last-applied not JSON", lastApplied[:60], "not a JSON object: masked"},
		{"last-applied JSON but no object", `"` + applyPassword + `"`, "not a JSON object: masked"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o := Decode("/registry/secrets/lab/lab-credentials", stored(t, appliedSecret(tt.lastApplied)))
			if o.Problem != "" || o.Object == nil {
				t.Fatalf("decode: %s", o.Label())
			}
			for name, text := range renderings(t, o) {
				if leak := masktest.Leaked(text, values...); leak != "" {
					t.Errorf("%s holds %q of a value:\n%s", name, leak, text)
				}
			}
			js, _ := o.JSON(false)
			var view struct {
				Metadata struct{ Annotations map[string]string }
				Data     map[string]string
			}
			if err := json.Unmarshal(js, &view); err != nil {
				t.Fatal(err)
			}
			ann := view.Metadata.Annotations[LastAppliedAnnotation]
			if !strings.Contains(ann, tt.annotationHas) {
				t.Errorf("last-applied annotation %q lacks %q", ann, tt.annotationHas)
			}
			if strings.HasPrefix(ann, "{") && !json.Valid([]byte(ann)) {
				t.Errorf("masked last-applied annotation is no longer JSON: %s", ann)
			}
			if view.Data["password"] != "<28 bytes>" || view.Metadata.Annotations["example.com/owner"] != "team-a" {
				t.Errorf("data %v, annotations %v: want the password's length and other annotations as they are", view.Data, view.Metadata.Annotations)
			}
			shown := Decoder{ShowSecrets: true}.Decode(o.Key.Raw, stored(t, appliedSecret(tt.lastApplied)))
			if masktest.Leaked(shown.Text(), applyPassword) == "" || !strings.Contains(shown.Text(), "example.com/manifest") {
				t.Errorf("--show-secrets does not show the values:\n%s", shown.Text())
			}
		})
	}
}

func TestMaskedValuesOfAJSONStoredSecretOfAnyShape(t *testing.T) {
	value := `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s","namespace":"lab",` +
		`"annotations":{"a":"{\"stringData\":{\"p\":\"` + applyPassword + `\"}"}},` +
		`"data":{"n":12345678901,"o":{"k":"` + applyToken + `"}},"stringData":"` + otherPassword + `"}`
	o := Decode("/registry/secrets/lab/s", []byte(value))
	for name, text := range renderings(t, o) {
		if leak := masktest.Leaked(text, applyPassword, applyToken, otherPassword, "12345678901"); leak != "" {
			t.Errorf("%s holds %q of a value:\n%s", name, leak, text)
		}
	}
}

func TestAValueUnderSecretsThatDoesNotDecodeIsNotDumped(t *testing.T) {
	whole := stored(t, appliedSecret(lastApplied))
	for name, value := range map[string][]byte{
		"truncated protobuf": whole[:len(whole)-10],
		"text":               []byte("password=" + applyPassword),
	} {
		o := Decode("/registry/secrets/lab/lab-credentials", value)
		if !o.RawHidden() {
			t.Errorf("%s: RawHidden is false", name)
		}
		for what, text := range renderings(t, o) {
			if leak := masktest.Leaked(text, applyPassword, applyToken); leak != "" {
				t.Errorf("%s: %s holds %q:\n%s", name, what, leak, text)
			}
		}
		if !strings.Contains(o.Text(), RawHiddenNote) {
			t.Errorf("%s: no note says why the value is not shown:\n%s", name, o.Text())
		}
		if shown := (Decoder{ShowSecrets: true}).Decode(o.Key.Raw, value); masktest.Leaked(shown.Text(), applyPassword) == "" {
			t.Errorf("%s: --show-secrets does not dump the value:\n%s", name, shown.Text())
		}
	}
}

func TestRawHiddenOnlyForAMaskedSecretInClear(t *testing.T) {
	secret := stored(t, testSecret())
	for _, tt := range []struct {
		name string
		o    Object
		want bool
	}{
		{"secret", Decode(secretKey, secret), true},
		{"secret shown", Decoder{ShowSecrets: true}.Decode(secretKey, secret), false},
		{"encrypted", Decode(secretKey, []byte("k8s:enc:aescbc:v1:key1:0123456789abcdef0123456789abcdef")), false},
		{"deployment", Decode("/registry/deployments/default/web", stored(t, deployment(1, 1))), false},
	} {
		if got := tt.o.RawHidden(); got != tt.want {
			t.Errorf("%s: RawHidden = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestDiffSaysAMaskedValueOfTheSameLengthChanged(t *testing.T) {
	before, after := appliedSecret(lastApplied), appliedSecret(strings.Replace(lastApplied, "battery", "BATTERY", 1))
	after.Data["password"] = []byte(strings.ToUpper(applyPassword))
	old := Decoder{}.DecodeAt("/registry/secrets/lab/lab-credentials", stored(t, before), 10)
	new := Decoder{}.DecodeAt("/registry/secrets/lab/lab-credentials", stored(t, after), 11)
	d := Diff(old, new)
	for _, want := range []string{"-  password: <28 bytes>\n", "+  password: <28 bytes, changed>\n", `bytes, changed>"},"type":"Opaque"}'`} {
		if !strings.Contains(d.Unified, want) {
			t.Errorf("unified diff lacks %q:\n%s", want, d.Unified)
		}
	}
	if !strings.Contains(d.Summary(), `data.password <28 bytes>→"<28 bytes, changed>"`) || d.Summary() != DiffSummary(old, new) {
		t.Errorf("summary %q (DiffSummary %q) does not say the password changed", d.Summary(), DiffSummary(old, new))
	}
	if leak := masktest.Leaked(d.Unified+d.Summary(), applyPassword, strings.ToUpper(applyPassword), applyToken); leak != "" {
		t.Errorf("diff holds %q:\n%s", leak, d.Unified)
	}
	if same := Diff(old, old); same.Unified != "" {
		t.Errorf("a revision against itself differs:\n%s", same.Unified)
	}
}

func TestFoldSummaryCountsOneEntry(t *testing.T) {
	if got := foldSummary(1, []string{"kubectl Apply"}); got != "managedFields: 1 entry folded (kubectl Apply)" {
		t.Errorf("foldSummary = %q", got)
	}
}

// FuzzMask masks a Secret view whose values and annotation are arbitrary:
// no value (marked by a token around it) survives, and every annotation
// that may hold a manifest comes out as a JSON object whose values are
// masks, or as a note.
func FuzzMask(f *testing.F) {
	f.Add("hunter2", lastApplied)
	f.Add("", `{"data":{"x":"eA=="}}`)
	f.Add("\xff\x00<1 bytes>", `{"stringData":{"x":1},"metadata":{"annotations":{"y":"{\"data\":{}}"}}}`)
	f.Add("a", `{not json`)
	f.Fuzz(func(t *testing.T, value, annotation string) {
		const token = "Zq7Kx9Wv"
		secret := token + value + token
		manifest, _ := json.Marshal(map[string]any{"stringData": map[string]any{"k": secret}, "metadata": map[string]any{
			"annotations": map[string]any{LastAppliedAnnotation: annotation}}})
		view := map[string]any{
			"kind": "Secret",
			"data": map[string]any{"k": base64.StdEncoding.EncodeToString([]byte(secret)), "r": secret},
			"metadata": map[string]any{"annotations": map[string]any{
				LastAppliedAnnotation: annotation, "copy": string(manifest),
			}},
		}
		masker{}.secret(view, "")
		out, err := json.Marshal(view)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(annotation, token) {
			return // the annotation's other fields are not values
		}
		if strings.Contains(string(out), token) || strings.Contains(string(out), base64.StdEncoding.EncodeToString([]byte(secret))) {
			t.Fatalf("a value survives masking: %s", out)
		}
		anns := view["metadata"].(map[string]any)["annotations"].(map[string]any)
		for k, v := range anns {
			checkMaskedManifest(t, k, v.(string))
		}
	})
}

// checkMaskedManifest fails unless s, a masked annotation, is a note or a
// JSON object whose data and stringData values are all masks.
func checkMaskedManifest(t *testing.T, key, s string) {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil || m == nil {
		if !maskPattern.MatchString(s) || strings.HasPrefix(s, "{") {
			t.Fatalf("annotation %s is neither JSON nor a note: %q", key, s)
		}
		return
	}
	for _, field := range []string{"data", "stringData"} {
		vals, ok := m[field].(map[string]any)
		if !ok {
			if v, present := m[field]; present && v != nil && !maskPattern.MatchString(v.(string)) {
				t.Fatalf("annotation %s: %s is %v, not masked", key, field, v)
			}
			continue
		}
		for k, v := range vals {
			if s, _ := v.(string); !maskPattern.MatchString(s) {
				t.Fatalf("annotation %s: %s.%s is %v, not masked", key, field, k, v)
			}
		}
	}
}
