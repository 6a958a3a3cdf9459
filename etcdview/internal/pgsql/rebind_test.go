package pgsql

import (
	"errors"
	"testing"
)

func TestRebindNumbersThePlaceholders(t *testing.T) {
	for q, want := range map[string]string{
		`SELECT 1`: `SELECT 1`,
		`SELECT id FROM kine WHERE id > ? AND id <= ? AND name = 'é'`:       `SELECT id FROM kine WHERE id > $1 AND id <= $2 AND name = 'é'`,
		`VALUES (?, ?, COALESCE(?, (SELECT value FROM kine WHERE id = ?)))`: `VALUES ($1, $2, COALESCE($3, (SELECT value FROM kine WHERE id = $4)))`,
	} {
		if got := rebind(q); got != want {
			t.Errorf("rebind(%s) = %s, want %s", q, got, want)
		}
	}
}

func TestShortSaysEachAddressOnce(t *testing.T) {
	err := errors.New("failed to connect to `user=a database=b`:\n\t127.0.0.1:1 (localhost): dial error: refused\n\t127.0.0.1:1 (localhost): dial error: refused")
	want := "failed to connect to `user=a database=b`: 127.0.0.1:1 (localhost): dial error: refused"
	if got := Short(err).Error(); got != want {
		t.Errorf("Short: %q, want %q", got, want)
	}
}
