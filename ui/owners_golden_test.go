package ui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/etcdscope/etcdscope/ui/uitest"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// ownedFixture is the fixture store with the Deployment web owning a
// ReplicaSet that owns the pods web-0 and web-1, as the controllers
// write them.
func ownedFixture() *uitest.Source {
	src := uitest.Fixture()
	owner := func(apiVersion, kind, name, uid string) []metav1.OwnerReference {
		return []metav1.OwnerReference{{APIVersion: apiVersion, Kind: kind, Name: name, UID: k8stypes.UID(uid), Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}
	}
	replicas := int32(2)
	src.PutObject(&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", UID: "5e1d0c5a-0000-4000-8000-000000000001", CreationTimestamp: ownersCreated}})
	src.PutObject(&appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web-7d9c", UID: "5e1d0c5a-0000-4000-8000-000000000002", CreationTimestamp: ownersCreated,
			OwnerReferences: owner("apps/v1", "Deployment", "web", "5e1d0c5a-0000-4000-8000-000000000001")},
		Spec: appsv1.ReplicaSetSpec{Replicas: &replicas},
	})
	for i, name := range []string{"web-0", "web-1"} {
		p := uitest.Pod("default", name, "nginx:1.28", true)
		p.UID = k8stypes.UID(fmt.Sprintf("5e1d0c5a-0000-4000-8000-00000000001%d", i))
		p.OwnerReferences = owner("apps/v1", "ReplicaSet", "web-7d9c", "5e1d0c5a-0000-4000-8000-000000000002")
		src.PutObject(p)
	}
	return src
}

var ownersCreated = metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))

func TestGoldenOwnersScreen(t *testing.T) {
	for _, size := range [][2]int{{100, 30}, {160, 45}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			tm := startOn(t, size[0], size[1], Options{Source: ownedFixture(), Description: "fixture store"})
			waitScreen(t, tm, "pods/", "etcd-0 ★")
			command(tm, "key /registry/replicasets/default/web-7d9c")
			waitScreen(t, tm, "replicas: 2")
			typeText(tm, "O")
			waitScreen(t, tm, "owners of /registry/replicasets/default/web-7d9c", "Pod/web-1", "open object")
			press(tm, tea.KeyDown)
			golden.RequireEqual(t, []byte(finalView(t, tm)))
		})
	}
}

func TestOwnersNodeOpensInTheObjectPane(t *testing.T) {
	tm := startOn(t, 120, 30, Options{Source: ownedFixture(), Description: "fixture store"})
	waitScreen(t, tm, "pods/", "etcd-0 ★")
	command(tm, "key /registry/pods/default/web-1")
	waitScreen(t, tm, "nginx:1.28")
	typeText(tm, "O")
	waitScreen(t, tm, "owners of /registry/pods/default/web-1", "└─ ReplicaSet/web-7d9c")
	typeText(tm, "g")
	press(tm, tea.KeyEnter)
	// The object pane has the Deployment, the tree beside it again, on the
	// Deployment's level with its key selected.
	waitScreen(t, tm, "kind: Deployment", "uid: 5e1d0c5a-0000-4000-8000-000000000001", "/registry/deployments/default/", "> web ")
	view := finalView(t, tm)
	if strings.Contains(view, "owners of") {
		t.Errorf("the owners pane is still up:\n%s", view)
	}
}
