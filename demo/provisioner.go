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

// provisioner is dynamic provisioning through a CSI driver, as the
// external-provisioner sidecar and the PV controller do it between them: a
// claim of the standard class gets a PersistentVolume made for it, and both
// are bound; a volume whose claim is gone is deleted (reclaim policy Delete).
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
	broadcaster := record.NewBroadcaster(record.WithContext(ctx))
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
	pv, err := p.volumes.Get(pvName)
	if apierrors.IsNotFound(err) {
		p.recorder.Eventf(claim, corev1.EventTypeNormal, "Provisioning", "External provisioner is provisioning volume for claim %q", key)
		if pv, err = p.client.CoreV1().PersistentVolumes().Create(ctx, volumeFor(claim, pvName), metav1.CreateOptions{}); apierrors.IsAlreadyExists(err) {
			pv, err = p.client.CoreV1().PersistentVolumes().Get(ctx, pvName, metav1.GetOptions{})
		}
		if err != nil {
			return err
		}
		p.recorder.Eventf(claim, corev1.EventTypeNormal, "ProvisioningSucceeded", "Successfully provisioned volume %s", pvName)
	}
	if err != nil {
		return err
	}
	if pv.Status.Phase != corev1.VolumeBound {
		pv = pv.DeepCopy()
		pv.Status.Phase = corev1.VolumeBound
		if _, err := p.client.CoreV1().PersistentVolumes().UpdateStatus(ctx, pv, metav1.UpdateOptions{}); err != nil {
			return err
		}
	}
	// The PV controller's bindClaimToVolume, then its status update.
	claim = claim.DeepCopy()
	if claim.Spec.VolumeName != pvName {
		claim.Spec.VolumeName = pvName
		metav1.SetMetaDataAnnotation(&claim.ObjectMeta, "pv.kubernetes.io/bind-completed", "yes")
		metav1.SetMetaDataAnnotation(&claim.ObjectMeta, "pv.kubernetes.io/bound-by-controller", "yes")
		if claim, err = p.client.CoreV1().PersistentVolumeClaims(ns).Update(ctx, claim, metav1.UpdateOptions{}); err != nil {
			return err
		}
	}
	claim.Status.Phase = corev1.ClaimBound
	claim.Status.AccessModes = pv.Spec.AccessModes
	claim.Status.Capacity = pv.Spec.Capacity
	_, err = p.client.CoreV1().PersistentVolumeClaims(ns).UpdateStatus(ctx, claim, metav1.UpdateOptions{})
	return err
}

func volumeFor(claim *corev1.PersistentVolumeClaim, name string) *corev1.PersistentVolume {
	return &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{"pv.kubernetes.io/provisioned-by": csiDriver},
			Finalizers: []string{"kubernetes.io/pv-protection"}},
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

// syncVolume deletes a provisioned volume whose claim is gone: the
// reclaim policy is Delete. The pv-protection finalizer is removed first,
// as the pv-protection controller does once no claim uses the volume.
func (p *provisioner) syncVolume(ctx context.Context, name string) error {
	pv, err := p.volumes.Get(name)
	if apierrors.IsNotFound(err) || err != nil || pv.Spec.ClaimRef == nil || pv.Annotations["pv.kubernetes.io/provisioned-by"] != csiDriver {
		return nil
	}
	ref := pv.Spec.ClaimRef
	claim, err := p.claims.PersistentVolumeClaims(ref.Namespace).Get(ref.Name)
	if err == nil && claim.UID == ref.UID {
		return nil
	}
	if len(pv.Finalizers) > 0 {
		pv = pv.DeepCopy()
		pv.Finalizers = nil
		if _, err := p.client.CoreV1().PersistentVolumes().Update(ctx, pv, metav1.UpdateOptions{}); err != nil {
			return err
		}
	}
	err = p.client.CoreV1().PersistentVolumes().Delete(ctx, name, metav1.DeleteOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
