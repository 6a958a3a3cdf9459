// Package masktest finds a Secret's values in what a test printed.
package masktest

import (
	"encoding/base64"
	"strings"
)

// Leaked is the first of values that text holds, plain or base64, or any
// 8 bytes of one of those; "" when none. A value shorter than 8 bytes is
// looked for whole.
func Leaked(text string, values ...string) string {
	for _, v := range values {
		for _, s := range []string{v, base64.StdEncoding.EncodeToString([]byte(v))} {
			if len(s) < 8 {
				if s != "" && strings.Contains(text, s) {
					return s
				}
				continue
			}
			for i := 0; i+8 <= len(s); i++ {
				if strings.Contains(text, s[i:i+8]) {
					return s[i : i+8]
				}
			}
		}
	}
	return ""
}
