// Package where filters decoded objects with a CEL expression, as
// kube-apiserver's ValidatingAdmissionPolicies and CRD validation rules
// evaluate theirs: the same libraries and the same per-call cost limit.
package where

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/interpreter"
	"k8s.io/apimachinery/pkg/util/version"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/cel/environment"
)

// MaxLength is the longest expression Compile takes, in bytes: a filter
// typed on a command line, far below the 100,000 code points cel-go's
// parser allows by default, so that a pasted blob is refused before it is
// parsed.
const MaxLength = 4096

// MaxEvalTime bounds one evaluation by the clock, beside the cost limit:
// cel-go's cost tracker keeps a stack that nested comprehensions grow, and
// its search of it makes the time to reach the limit grow faster than the
// cost (three nested exists() over 100,000 items: 9 s to the limit). Its
// interrupt is checked every celconfig.CheckFrequency (100) comprehension
// steps, as kube-apiserver checks its request's context.
const MaxEvalTime = time.Second

// Variable is the name the object has in an expression.
const Variable = "object"

// compatibility is the Kubernetes version whose CEL environment filters
// use: kube-apiserver 1.37's, the version etcdscope bundles. Its base
// environment (environment.MustBaseEnvSet) has cel-go's strings, sets,
// lists and two-variable comprehensions, and Kubernetes' lists, regex,
// URL, quantity, IP, CIDR, format and semver libraries; its programs track
// cost and stop at celconfig.PerCallLimit (1,000,000, "roughly 0.1
// second" of evaluation by the API server's reckoning).
var compatibility = version.MajorMinor(1, 37)

// env is the base environment with one variable, the object, of dynamic
// type: its fields are only known when an object is matched.
var env = sync.OnceValues(func() (*cel.Env, error) {
	return environment.MustBaseEnvSet(compatibility).StoredExpressionsEnv().Extend(cel.Variable(Variable, cel.DynType))
})

// Filter is a compiled expression.
type Filter struct {
	expr string
	prg  cel.Program
}

// Compile parses and checks expr. An expression the checker can tell is not
// a bool (1 + 2, a string) is refused here; one of dynamic type (a field of
// the object) is checked on each object by Match. Errors are *Error.
func Compile(expr string) (*Filter, error) {
	if len(expr) > MaxLength {
		return nil, tooLong(expr)
	}
	if strings.TrimSpace(expr) == "" {
		return nil, &Error{Expr: expr, Line: 1, Column: 1, Msg: "the expression is empty"}
	}
	if !utf8.ValidString(expr) {
		return nil, &Error{Expr: expr, Line: 1, Column: 1, Msg: "the expression is not valid UTF-8"}
	}
	e, err := env()
	if err != nil {
		return nil, fmt.Errorf("CEL environment: %w", err)
	}
	ast, iss := e.Compile(expr)
	if iss.Err() != nil {
		return nil, issueError(expr, iss)
	}
	if t := ast.OutputType(); !t.IsAssignableType(cel.BoolType) {
		line, col := exprStart(expr)
		return nil, &Error{Expr: expr, Line: line, Column: col, Msg: fmt.Sprintf("the expression is of type %s, not bool: a filter says true or false", t)}
	}
	prg, err := e.Program(ast, cel.InterruptCheckFrequency(celconfig.CheckFrequency))
	if err != nil {
		return nil, &Error{Expr: expr, Line: 1, Column: 1, Msg: err.Error()}
	}
	return &Filter{expr: expr, prg: prg}, nil
}

// String is the expression.
func (f *Filter) String() string { return f.expr }

// Match evaluates the expression on obj, a JSON-shaped object (maps,
// slices, strings, int64, float64, bools, nil, as encoding/json and the
// unstructured converter make them). An expression that cannot be
// evaluated on obj (a key it lacks, a type mismatch, the cost limit) is an
// error, as is one that gives no bool.
func (f *Filter) Match(obj map[string]any) (ok bool, err error) {
	defer func() {
		// cel-go recovers from its own panics; this is for a value of a
		// type the adapter does not expect.
		if r := recover(); r != nil {
			ok, err = false, fmt.Errorf("internal error evaluating %q: %v", f.expr, r)
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), MaxEvalTime)
	defer cancel()
	val, _, err := f.prg.ContextEval(ctx, map[string]any{Variable: obj})
	if err != nil {
		return false, evalError(err, ctx.Err() != nil)
	}
	b, isBool := val.(types.Bool)
	if !isBool {
		return false, fmt.Errorf("the expression gave %s %s, not a bool", val.Type().TypeName(), shortValue(val))
	}
	return bool(b), nil
}

// evalError says in plain words why evaluation stopped. cel-go reports the
// cost limit as "operation cancelled: actual cost limit exceeded", and
// the end of the context as "operation interrupted".
func evalError(err error, timedOut bool) error {
	var cancelled interpreter.EvalCancelledError
	switch {
	case errors.As(err, &cancelled) && cancelled.Cause == interpreter.CostLimitExceeded:
		return fmt.Errorf("stopped: the expression passed kube-apiserver's CEL cost limit per call (%d): %w", celconfig.PerCallLimit, err)
	case timedOut:
		return fmt.Errorf("stopped: the expression ran longer than %v on one object: %w", MaxEvalTime, err)
	}
	return err
}

// shortValue is val as a short quote for an error message.
func shortValue(val any) string {
	s := fmt.Sprintf("%v", val)
	if r := []rune(s); len(r) > 40 {
		s = string(r[:40]) + "…"
	}
	return fmt.Sprintf("%q", s)
}
