package procnode

import (
	"fmt"
	"net"
	"os"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
)

// addresses gives pods their loopback addresses and keeps the names that
// pods of one namespace and subdomain (a JobSet's headless Service) know
// each other by.
//
// An address belongs to a name, not to a pod: a pod with a subdomain gets
// the address of <hostname>.<subdomain> in its namespace, which the next
// pod of that name (a JobSet's restart) gets again, and which can be
// reserved before the pod exists. That is what lets rank 0's address
// resolve in a pod that starts before rank 0's: torchrun's workers look
// the master up once. A pod without a subdomain gets an address of its
// own (by UID).
type addresses struct {
	mu sync.Mutex
	// second is the second octet of every address: 127.<second>.x.y.
	second byte
	next   int
	byKey  map[string]net.IP
	// groups holds, per namespace/subdomain, the hostnames with an address.
	groups map[string]map[string]net.IP
	// files are the hosts files of running pods, per group, rewritten
	// when the group gains a name.
	files map[string]map[string]*hostsFile
	// extra are entries every hosts file has (Config.ExtraHosts).
	extra []corev1.HostAlias
}

func newAddresses(second byte, extra []corev1.HostAlias) *addresses {
	return &addresses{
		second: second, byKey: map[string]net.IP{},
		groups: map[string]map[string]net.IP{}, files: map[string]map[string]*hostsFile{},
		extra: extra,
	}
}

// addressesPerBlock is how many addresses a 127.<second>.0.0/16 holds,
// without the .0 and .255 of each /24.
const addressesPerBlock = 256 * 254

func (a *addresses) allocate(key string) (net.IP, error) {
	if ip, ok := a.byKey[key]; ok {
		return ip, nil
	}
	if a.next >= addressesPerBlock {
		return nil, fmt.Errorf("all %d pod addresses of 127.%d.0.0/16 are taken", addressesPerBlock, a.second)
	}
	ip := net.IPv4(127, a.second, byte(a.next/254), byte(a.next%254+1)).To4()
	a.next++
	a.byKey[key] = ip
	return ip, nil
}

func groupKey(namespace, subdomain string) string { return namespace + "/" + subdomain }

// podHostname is the pod's hostname as the kubelet sets it.
func podHostname(pod *corev1.Pod) string {
	if pod.Spec.Hostname != "" {
		return pod.Spec.Hostname
	}
	return pod.Name
}

// reserve gives hostnames of a namespace and subdomain their addresses
// (those that have one keep it), and rewrites the hosts files of the
// group's running pods if that added a name.
func (a *addresses) reserve(namespace, subdomain string, hostnames ...string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	g := groupKey(namespace, subdomain)
	if a.groups[g] == nil {
		a.groups[g] = map[string]net.IP{}
	}
	added := false
	for _, h := range hostnames {
		if _, ok := a.groups[g][h]; ok {
			continue
		}
		ip, err := a.allocate("name:" + g + "/" + h)
		if err != nil {
			return err
		}
		a.groups[g][h] = ip
		added = true
	}
	if !added {
		return nil
	}
	var errs []string
	for _, f := range a.files[g] {
		if err := f.write(a.hostsLocked(f.pod)); err != nil {
			errs = append(errs, err.Error())
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("rewriting hosts files: %s", strings.Join(errs, "; "))
	}
	return nil
}

// podIP is the pod's address: its name's in its subdomain, or one of its
// own.
func (a *addresses) podIP(pod *corev1.Pod) (net.IP, error) {
	if pod.Spec.Subdomain != "" {
		if err := a.reserve(pod.Namespace, pod.Spec.Subdomain, podHostname(pod)); err != nil {
			return nil, err
		}
		a.mu.Lock()
		defer a.mu.Unlock()
		return a.groups[groupKey(pod.Namespace, pod.Spec.Subdomain)][podHostname(pod)], nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.allocate("pod:" + string(pod.UID))
}

// hosts is the content of the pod's /etc/hosts.
func (a *addresses) hosts(pod *corev1.Pod) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.hostsLocked(pod)
}

func (a *addresses) hostsLocked(pod *corev1.Pod) string {
	var b strings.Builder
	b.WriteString("# Kubernetes-managed hosts file (the simulated cluster's process node).\n" +
		"127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n" +
		"fe00::0\tip6-localnet\nfe00::0\tip6-mcastprefix\nfe00::1\tip6-allnodes\nfe00::2\tip6-allrouters\n")
	self := podHostname(pod)
	if pod.Spec.Subdomain == "" {
		if ip := a.byKey["pod:"+string(pod.UID)]; ip != nil {
			fmt.Fprintf(&b, "%s\t%s\n", ip, self)
		}
	} else {
		group := a.groups[groupKey(pod.Namespace, pod.Spec.Subdomain)]
		// The pod's own name first, as the kubelet writes it, then its
		// peers of the subdomain, as the headless Service's DNS would
		// answer for them.
		names := append([]string{self}, sortedKeys(group)...)
		for i, h := range names {
			ip := group[h]
			if ip == nil || (i > 0 && h == self) {
				continue
			}
			fqdn := h + "." + pod.Spec.Subdomain + "." + pod.Namespace
			line := fmt.Sprintf("%s\t%s.svc.cluster.local\t%s.svc\t%s\t%s.%s", ip, fqdn, fqdn, fqdn, h, pod.Spec.Subdomain)
			if h == self {
				line += "\t" + h
			}
			b.WriteString(line + "\n")
		}
	}
	aliases := append(append([]corev1.HostAlias{}, a.extra...), pod.Spec.HostAliases...)
	if len(aliases) > 0 {
		b.WriteString("\n# Entries added by HostAliases.\n")
		for _, h := range aliases {
			fmt.Fprintf(&b, "%s\t%s\n", h.IP, strings.Join(h.Hostnames, "\t"))
		}
	}
	return b.String()
}

// hostsFile is a running pod's /etc/hosts. It is bind-mounted into the
// pod's processes, so it is rewritten in place: a renamed file would not
// be the mounted one.
type hostsFile struct {
	path string
	pod  *corev1.Pod
}

func (f *hostsFile) write(content string) error {
	out, err := os.OpenFile(f.path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := out.WriteString(content); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// writeHosts writes the pod's hosts file at path and keeps it up to date
// while the pod runs (until forget).
func (a *addresses) writeHosts(pod *corev1.Pod, path string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	f := &hostsFile{path: path, pod: pod}
	if err := f.write(a.hostsLocked(pod)); err != nil {
		return fmt.Errorf("writing the pod's hosts file: %w", err)
	}
	if pod.Spec.Subdomain != "" {
		g := groupKey(pod.Namespace, pod.Spec.Subdomain)
		if a.files[g] == nil {
			a.files[g] = map[string]*hostsFile{}
		}
		a.files[g][string(pod.UID)] = f
	}
	return nil
}

// forget stops updating the pod's hosts file.
func (a *addresses) forget(pod *corev1.Pod) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.files[groupKey(pod.Namespace, pod.Spec.Subdomain)], string(pod.UID))
}
