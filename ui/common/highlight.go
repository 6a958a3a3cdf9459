package common

import (
	"strings"

	"github.com/etcdscope/etcdscope/decode"
)

// YAMLLines colours YAML by a walk over each line's tokens: the key before
// ": ", the scalar after it, list dashes and comments. It is not a parser;
// it only has to look right on what sigs.k8s.io/yaml prints.
func (s *Styles) YAMLLines(text string) []Line {
	lines := PlainLines(text)
	for i := range lines {
		lines[i].styled = s.yamlLine(lines[i].plain)
	}
	return lines
}

func (s *Styles) yamlLine(l string) string {
	body := strings.TrimLeft(l, " ")
	indent := l[:len(l)-len(body)]
	if strings.HasPrefix(body, "#") {
		return indent + s.YAMLComment.Render(body)
	}
	var b strings.Builder
	b.WriteString(indent)
	for strings.HasPrefix(body, "- ") {
		b.WriteString("- ")
		body = body[2:]
	}
	if body == "-" {
		b.WriteString(body)
		return b.String()
	}
	k, v, ok := cutKey(body)
	if !ok {
		b.WriteString(s.scalar(body))
		return b.String()
	}
	b.WriteString(s.YAMLKey.Render(k))
	b.WriteString(":")
	if v != "" {
		b.WriteString(" ")
		b.WriteString(s.scalar(v))
	}
	return b.String()
}

// cutKey splits "key: value" or "key:"; a quoted key may hold ": ".
func cutKey(body string) (k, v string, ok bool) {
	if strings.HasPrefix(body, `"`) || strings.HasPrefix(body, `'`) {
		q := body[:1]
		end := strings.Index(body[1:], q)
		if end < 0 {
			return "", "", false
		}
		rest := body[end+2:]
		if rest == ":" || strings.HasPrefix(rest, ": ") {
			return body[:end+2], strings.TrimPrefix(strings.TrimPrefix(rest, ":"), " "), true
		}
		return "", "", false
	}
	if strings.HasSuffix(body, ":") && !strings.Contains(body, " ") {
		return body[:len(body)-1], "", true
	}
	i := strings.Index(body, ": ")
	if i <= 0 {
		return "", "", false
	}
	return body[:i], body[i+2:], true
}

func (s *Styles) scalar(v string) string {
	switch {
	case v == "true" || v == "false" || v == "null" || v == "~":
		return s.YAMLBool.Render(v)
	case v == "|" || v == "|-" || v == ">" || v == "{}" || v == "[]":
		return v
	case isNumber(v):
		return s.YAMLNumber.Render(v)
	}
	return s.YAMLString.Render(v)
}

func isNumber(v string) bool {
	if v == "" {
		return false
	}
	for i, r := range v {
		if (r < '0' || r > '9') && r != '.' && !(i == 0 && r == '-') {
			return false
		}
	}
	return true
}

// DiffLines colours a unified diff: +, - and @@ lines.
func (s *Styles) DiffLines(text string) []Line {
	lines := PlainLines(text)
	for i, l := range lines {
		switch decode.KindOfDiffLine(l.plain) {
		case decode.DiffHeader:
			lines[i].styled = s.Bold.Render(l.plain)
		case decode.DiffAdded:
			lines[i].styled = s.DiffAdd.Render(l.plain)
		case decode.DiffRemoved:
			lines[i].styled = s.DiffDel.Render(l.plain)
		case decode.DiffHunk:
			lines[i].styled = s.DiffHunk.Render(l.plain)
		}
	}
	return lines
}
