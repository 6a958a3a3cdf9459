package ui

import (
	"fmt"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/etcdscope/etcdscope/ui/uitest"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// floodedFixture is the fixture store with the Events flood of a pod that
// fails in a loop: 120 Events, the most keys and bytes of the store.
func floodedFixture() *uitest.Source {
	src := uitest.Fixture()
	for i := range 120 {
		src.PutObject(&corev1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("web-0.%04d", i)},
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "default", Name: "web-0"},
			Reason:         "BackOff", Message: "Back-off restarting failed container web in pod web-0", Type: corev1.EventTypeWarning, Count: int32(i + 1)})
	}
	return src
}

func TestGoldenSpaceScreen(t *testing.T) {
	for _, size := range [][2]int{{100, 30}, {160, 45}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			tm := startOn(t, size[0], size[1], Options{Source: floodedFixture(), Description: "fixture store"})
			waitScreen(t, tm, "pods/", "etcd-0 ★")
			typeText(tm, "6")
			waitScreen(t, tm, "space  /registry/", "events/", "Events: 120 keys")
			// Down into the Events, sorted by keys.
			press(tm, tea.KeyEnter)
			typeText(tm, "s")
			waitScreen(t, tm, "space  /registry/events/", "sorted by keys")
			golden.RequireEqual(t, []byte(finalView(t, tm)))
		})
	}
}

// The space screen's live rates come from the batches of the tail's watch.
func TestSpaceMeasuresTheWritesTheTailReceives(t *testing.T) {
	src := uitest.Fixture()
	tm := startOn(t, 160, 45, Options{Source: src, Description: "fixture store"})
	waitScreen(t, tm, "pods/", "etcd-0 ★")
	typeText(tm, "6")
	waitScreen(t, tm, "space  /registry/", "LARGEST")
	// A pod the report did not read: only the live list can name it.
	src.PutObject(uitest.Pod("default", "hot-0", "nginx:1.29", false))
	src.PutObject(uitest.Pod("default", "hot-0", "nginx:1.29", true))
	waitScreen(t, tm, "pods/default/hot-0")
}
