package demo

import (
	"context"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
)

// provisioner is the external-provisioner sidecar of a CSI driver: a claim
// of the standard class gets a PersistentVolume made for it (pre-bound to
// the claim, which kube-controller-manager's PV controller then binds),
// and a volume released by its claim is deleted (reclaim policy Delete).
type provisioner struct {
	client   kubernetes.Interface
	claims   corelisters.PersistentVolumeClaimLister
	volumes  corelisters.PersistentVolumeLister
	queue    workqueue.TypedRateLimitingInterface[string]
	recorder record.EventRecorder
}

func (d *Demo) runProvisioner(ctx context.Context, c clients) error {
	client, err := c.forUser(provisionerUser, "csi-provisioner")
	if err != nil {
		return err
	}
	f := informers.NewSharedInformerFactory(client, resync)
	defer f.Shutdown()
	broadcaster := newBroadcaster(ctx)
	defer broadcaster.Shutdown()
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: client.CoreV1().Events("")})
	p := &provisioner{
		client: client, claims: f.Core().V1().PersistentVolumeClaims().Lister(), volumes: f.Core().V1().PersistentVolumes().Lister(),
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "csi-provisioner"}),
		recorder: broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: csiDriver + "_csi-provisioner"}),
	}
	defer p.queue.ShutDown()
	claimInf, volInf := f.Core().V1().PersistentVolumeClaims().Informer(), f.Core().V1().PersistentVolumes().Informer()
	d.observe("csi-provisioner", "persistentvolumeclaims", claimInf, nil)
	// Keys: "claim/ns/name" and "volume/name".
	handler := func(prefix string) cache.ResourceEventHandlerFuncs {
		add := func(obj any) {
			if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
				p.queue.Add(prefix + key)
			}
		}
		return cache.ResourceEventHandlerFuncs{AddFunc: add, UpdateFunc: func(_, o any) { add(o) }, DeleteFunc: add}
	}
	_, _ = claimInf.AddEventHandler(handler("claim/"))
	_, _ = volInf.AddEventHandler(handler("volume/"))
	_, _ = claimInf.AddEventHandler(cache.ResourceEventHandlerFuncs{DeleteFunc: func(any) { p.enqueueVolumes() }})
	f.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), claimInf.HasSynced, volInf.HasSynced) {
		return nil
	}
	go func() {
		<-ctx.Done()
		p.queue.ShutDown()
	}()
	wait.UntilWithContext(ctx, p.worker, time.Second)
	return nil
}

func (p *provisioner) enqueueVolumes() {
	vols, _ := p.volumes.List(labelsEverything)
	for _, v := range vols {
		p.queue.Add("volume/" + v.Name)
	}
}

func (p *provisioner) worker(ctx context.Context) { work(ctx, p.queue, once(p.sync)) }

// sync handles a key of the queue: "volume/NAME" or "claim/NS/NAME".
func (p *provisioner) sync(ctx context.Context, key string) error {
	if name, ok := strings.CutPrefix(key, "volume/"); ok {
		return p.syncVolume(ctx, name)
	}
	if nsName, ok := strings.CutPrefix(key, "claim/"); ok {
		return p.syncClaim(ctx, nsName)
	}
	return nil
}

func (p *provisioner) syncClaim(ctx context.Context, key string) error {
	ns, name, _ := cache.SplitMetaNamespaceKey(key)
	claim, err := p.claims.PersistentVolumeClaims(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil || claim.DeletionTimestamp != nil || claim.Status.Phase == corev1.ClaimBound {
		return err
	}
	class := ptr.Deref(claim.Spec.StorageClassName, "")
	if class != storageClassName {
		return nil
	}
	pvName := "pvc-" + string(claim.UID)
	_, err = p.volumes.Get(pvName)
	if apierrors.IsNotFound(err) {
		p.recorder.Eventf(claim, corev1.EventTypeNormal, "Provisioning", "External provisioner is provisioning volume for claim %q", key)
		_, err = p.client.CoreV1().PersistentVolumes().Create(ctx, volumeFor(claim, pvName), metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		if err == nil {
			p.recorder.Eventf(claim, corev1.EventTypeNormal, "ProvisioningSucceeded", "Successfully provisioned volume %s", pvName)
		}
	}
	return err
}

func volumeFor(claim *corev1.PersistentVolumeClaim, name string) *corev1.PersistentVolume {
	return &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{"pv.kubernetes.io/provisioned-by": csiDriver}},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: claim.Spec.Resources.Requests[corev1.ResourceStorage]},
			AccessModes:                   claim.Spec.AccessModes,
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimDelete,
			StorageClassName:              storageClassName,
			VolumeMode:                    claim.Spec.VolumeMode,
			ClaimRef: &corev1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: claim.Namespace, Name: claim.Name,
				UID: claim.UID, ResourceVersion: claim.ResourceVersion},
			PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{
				Driver: csiDriver, VolumeHandle: name, FSType: "ext4",
			}},
		},
	}
}

// syncVolume deletes a provisioned volume the PV controller released (its
// claim is gone; the reclaim policy is Delete), as the external
// provisioner does. The pv-protection controller then removes its
// finalizer, and the object goes.
func (p *provisioner) syncVolume(ctx context.Context, name string) error {
	pv, err := p.volumes.Get(name)
	if apierrors.IsNotFound(err) || err != nil || pv.Spec.ClaimRef == nil || pv.Annotations["pv.kubernetes.io/provisioned-by"] != csiDriver {
		return nil
	}
	if pv.Status.Phase != corev1.VolumeReleased || pv.DeletionTimestamp != nil {
		return nil
	}
	err = p.client.CoreV1().PersistentVolumes().Delete(ctx, name, metav1.DeleteOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
