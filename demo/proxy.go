package demo

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/client-go/informers"
	corelisters "k8s.io/client-go/listers/core/v1"
)

// The consumers of EndpointSlices on the write path: kube-proxy on every
// node turns Services and their ready endpoints into forwarding rules, and
// CoreDNS turns them into DNS records. Here they only watch, read-only,
// and say what they would program; nothing is programmed.

func (d *Demo) runKubeProxies(ctx context.Context, c clients) error {
	client, err := c.forUser(proxyUser, "kube-proxy")
	if err != nil {
		return err
	}
	var wg sync.WaitGroup
	for i := range d.nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Each node's kube-proxy has informers of its own.
			f := informers.NewSharedInformerFactory(client, resync)
			defer f.Shutdown()
			services := f.Core().V1().Services().Lister()
			who := "kube-proxy " + nodeName(i)
			d.observe(who, "services", f.Core().V1().Services().Informer(), func(obj any) string {
				return proxyRules(obj.(*corev1.Service), nil)
			})
			d.observe(who, "endpointslices", f.Discovery().V1().EndpointSlices().Informer(), func(obj any) string {
				slice := obj.(*discoveryv1.EndpointSlice)
				svc, err := serviceOf(services, slice)
				if err != nil {
					return "no Service for this slice: no rules"
				}
				return proxyRules(svc, slice)
			})
			f.Start(ctx.Done())
			<-ctx.Done()
		}()
	}
	wg.Wait()
	return nil
}

func (d *Demo) runCoreDNS(ctx context.Context, c clients) error {
	client, err := c.forUser(coreDNSUser, "coredns")
	if err != nil {
		return err
	}
	f := informers.NewSharedInformerFactory(client, resync)
	defer f.Shutdown()
	services := f.Core().V1().Services().Lister()
	d.observe("coredns", "services", f.Core().V1().Services().Informer(), func(obj any) string {
		return dnsRecords(obj.(*corev1.Service), nil)
	})
	d.observe("coredns", "endpointslices", f.Discovery().V1().EndpointSlices().Informer(), func(obj any) string {
		slice := obj.(*discoveryv1.EndpointSlice)
		svc, err := serviceOf(services, slice)
		if err != nil {
			return "no Service for this slice: no records"
		}
		return dnsRecords(svc, slice)
	})
	f.Start(ctx.Done())
	<-ctx.Done()
	return nil
}

func serviceOf(services corelisters.ServiceLister, slice *discoveryv1.EndpointSlice) (*corev1.Service, error) {
	return services.Services(slice.Namespace).Get(slice.Labels[discoveryv1.LabelServiceName])
}

func readyAddresses(slice *discoveryv1.EndpointSlice) []string {
	if slice == nil {
		return nil
	}
	var out []string
	for _, e := range slice.Endpoints {
		if e.Conditions.Ready == nil || *e.Conditions.Ready {
			out = append(out, e.Addresses...)
		}
	}
	sort.Strings(out)
	return out
}

// proxyRules is what kube-proxy's iptables mode writes for a Service: a
// KUBE-SERVICES jump per port to a chain that spreads over the endpoints.
func proxyRules(svc *corev1.Service, slice *discoveryv1.EndpointSlice) string {
	if svc.Spec.ClusterIP == "" || svc.Spec.ClusterIP == corev1.ClusterIPNone {
		return fmt.Sprintf("%s/%s is headless: no rules", svc.Namespace, svc.Name)
	}
	var ports []string
	for _, p := range svc.Spec.Ports {
		ports = append(ports, fmt.Sprintf("%d/%s", p.Port, p.Protocol))
	}
	eps := readyAddresses(slice)
	if slice == nil {
		return fmt.Sprintf("KUBE-SERVICES %s:%s for %s/%s", svc.Spec.ClusterIP, strings.Join(ports, ","), svc.Namespace, svc.Name)
	}
	return fmt.Sprintf("KUBE-SVC %s:%s → %d endpoints %s", svc.Spec.ClusterIP, strings.Join(ports, ","), len(eps), strings.Join(eps, " "))
}

// dnsRecords is what CoreDNS's kubernetes plugin answers for a Service: an
// A record for its cluster IP, or one per ready endpoint when headless.
func dnsRecords(svc *corev1.Service, slice *discoveryv1.EndpointSlice) string {
	name := fmt.Sprintf("%s.%s.svc.cluster.local.", svc.Name, svc.Namespace)
	if svc.Spec.ClusterIP != corev1.ClusterIPNone {
		return fmt.Sprintf("%s A %s", name, svc.Spec.ClusterIP)
	}
	return fmt.Sprintf("%s A %s", name, strings.Join(readyAddresses(slice), " "))
}
