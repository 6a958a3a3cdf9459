package pgsql

import (
	"context"
	"database/sql/driver"
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// connector is pgx's database/sql connector whose connections take SQL
// written for SQLite's placeholders: the statements of kine's table are
// written once, with ?, for both databases.
func connector(config pgx.ConnConfig) driver.Connector {
	return rebinder{stdlib.GetConnector(config)}
}

type rebinder struct{ driver.Connector }

func (r rebinder) Connect(ctx context.Context) (driver.Conn, error) {
	c, err := r.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	sc, ok := c.(*stdlib.Conn)
	if !ok {
		c.Close()
		return nil, errors.New("pgx's connector gave no *stdlib.Conn")
	}
	return conn{sc}, nil
}

// conn is pgx's connection (every interface of database/sql's it has)
// with the statements' placeholders rewritten on the way in.
type conn struct{ *stdlib.Conn }

func (c conn) Prepare(query string) (driver.Stmt, error) { return c.Conn.Prepare(rebind(query)) }

func (c conn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	return c.Conn.PrepareContext(ctx, rebind(query))
}

func (c conn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	return c.Conn.ExecContext(ctx, rebind(query), args)
}

func (c conn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	return c.Conn.QueryContext(ctx, rebind(query), args)
}

// rebind numbers the ? placeholders of query as PostgreSQL's $1, $2...
// etcdscope's statements hold no ? but as placeholders: none in a string
// literal, and none of PostgreSQL's jsonb operators.
func rebind(query string) string {
	if !strings.Contains(query, "?") {
		return query
	}
	var b strings.Builder
	n := 0
	for _, r := range query {
		if r != '?' {
			b.WriteRune(r)
			continue
		}
		n++
		b.WriteByte('$')
		b.WriteString(strconv.Itoa(n))
	}
	return b.String()
}

// Short is err in one line: pgx says each address a connection tried on
// a line of its own, and tries each twice under sslmode=prefer (with TLS,
// then without), which says the same twice.
func Short(err error) error {
	if err == nil || !strings.Contains(err.Error(), "\n") {
		return err
	}
	var parts []string
	for _, l := range strings.Split(err.Error(), "\n") {
		if l = strings.TrimSpace(l); l != "" && !slices.Contains(parts, l) {
			parts = append(parts, l)
		}
	}
	return errors.New(strings.Join(parts, " "))
}
