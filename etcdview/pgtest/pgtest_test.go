package pgtest

import (
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestServerAcceptsTheTestsRoleOnLoopback: the server runs, the test's role
// connects without a password and may create a database.
func TestServerAcceptsTheTestsRoleOnLoopback(t *testing.T) {
	s := Start(t)
	s.CreateDatabase(t, "recordings")
	c, err := pgx.Connect(t.Context(), s.URL("recordings", ""))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(t.Context())
	var who, db string
	if err := c.QueryRow(t.Context(), "SELECT current_user, current_database()").Scan(&who, &db); err != nil {
		t.Fatal(err)
	}
	if who != User || db != "recordings" {
		t.Errorf("connected as %s to %s, want %s to recordings", who, db, User)
	}
}
