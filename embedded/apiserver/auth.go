package apiserver

import (
	"context"
	"crypto/rand"
	"encoding/csv"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/request/bearertoken"
	"k8s.io/apiserver/pkg/authentication/token/tokenfile"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
)

// Token is one bearer token the server accepts and the identity it stands for.
type Token struct {
	Token  string
	User   string
	UID    string
	Groups []string
}

// The groups the built-in authorizer knows: AdminGroup may do everything
// (it is kube-apiserver's system:masters), ViewerGroup may only get, list
// and watch. Any other identity is authenticated but refused everything.
const (
	AdminGroup  = user.SystemPrivilegedGroup
	ViewerGroup = "etcdscope:viewers"
)

// defaultTokens are the bundled identities: admin and a read-only viewer,
// with fresh random tokens (crypto/rand.Text: 128 bits of randomness).
func defaultTokens() []Token {
	return []Token{
		{Token: rand.Text(), User: "admin", UID: "admin", Groups: []string{AdminGroup}},
		{Token: rand.Text(), User: "viewer", UID: "viewer", Groups: []string{ViewerGroup}},
	}
}

// readTokenFile reads kube-apiserver's --token-auth-file format: lines of
// token,user,uid and an optional quoted comma-separated group list.
func readTokenFile(path string) ([]Token, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.FieldsPerRecord = -1
	r.TrimLeadingSpace = true
	records, err := r.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("token file %s: %w", path, err)
	}
	var tokens []Token
	for i, rec := range records {
		if len(rec) < 3 {
			return nil, fmt.Errorf("token file %s line %d: want token,user,uid[,\"groups\"], got %d fields", path, i+1, len(rec))
		}
		t := Token{Token: rec[0], User: rec[1], UID: rec[2]}
		if len(rec) > 3 && rec[3] != "" {
			for _, g := range strings.Split(rec[3], ",") {
				t.Groups = append(t.Groups, strings.TrimSpace(g))
			}
		}
		tokens = append(tokens, t)
	}
	return tokens, nil
}

// newAuthenticator is kube-apiserver's static token authenticator
// (--token-auth-file), timed for the write trace.
func newAuthenticator(tokens []Token) authenticator.Request {
	users := map[string]*user.DefaultInfo{}
	for _, t := range tokens {
		users[t.Token] = &user.DefaultInfo{Name: t.User, UID: t.UID, Groups: append([]string{user.AllAuthenticated}, t.Groups...)}
	}
	return timedAuthenticator{bearertoken.New(tokenfile.New(users))}
}

type timedAuthenticator struct{ authenticator.Request }

func (a timedAuthenticator) AuthenticateRequest(req *http.Request) (*authenticator.Response, bool, error) {
	defer recorderFrom(req.Context()).stage(StageAuthn, time.Now())
	return a.Request.AuthenticateRequest(req)
}

var readVerbs = []string{"get", "list", "watch"}

// authorizeByGroup allows AdminGroup everything and ViewerGroup reads. It
// answers NoOpinion otherwise, which the server turns into 403 Forbidden.
func authorizeByGroup(ctx context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	r := recorderFrom(ctx)
	defer r.stage(StageAuthz, time.Now())
	r.update(func(r *traceRecorder) {
		r.t.Verb, r.t.Namespace, r.t.Name = a.GetVerb(), a.GetNamespace(), a.GetName()
		r.t.Resource = a.GetResource()
		if a.GetSubresource() != "" {
			r.t.Resource += "/" + a.GetSubresource()
		}
		if a.GetUser() != nil {
			r.t.User = a.GetUser().GetName()
		}
	})
	u := a.GetUser()
	if u == nil {
		return authorizer.DecisionNoOpinion, "no user", nil
	}
	groups := u.GetGroups()
	switch {
	case slices.Contains(groups, AdminGroup):
		return authorizer.DecisionAllow, "", nil
	case slices.Contains(groups, ViewerGroup) && slices.Contains(readVerbs, a.GetVerb()):
		return authorizer.DecisionAllow, "", nil
	case slices.Contains(groups, ViewerGroup):
		return authorizer.DecisionNoOpinion, "viewers may only get, list and watch", nil
	}
	return authorizer.DecisionNoOpinion, "", nil
}
