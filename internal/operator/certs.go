package operator

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/open-policy-agent/cert-controller/pkg/rotator"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/certwatcher"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configv1alpha1 "github.com/trainforge/trainforge/api/config/v1alpha1"
)

// +kubebuilder:rbac:groups="",namespace=trainforge-system,resources=secrets,verbs=get;list;watch;create;update;patch
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=validatingwebhookconfigurations,verbs=get;list;watch;update;patch

// Names of the serving certificate in the certificate directory, as
// controller-runtime's webhook server reads them.
const (
	certFile = "tls.crt"
	keyFile  = "tls.key"
	// caFile is the CA that signs them: trainer pods get it to trust the
	// status endpoint.
	caFile = "ca.crt"
)

// certNamespace is the namespace of the certificate's Secret and Service.
func certNamespace(cfg *configv1alpha1.Configuration) string {
	return configv1alpha1.ControllerNamespace(cfg)
}

// servingCert gives the webhook server its certificate once the rotator
// has written it: the server starts listening at once, and a TLS handshake
// before the certificate exists fails (the API server retries), instead of
// the whole manager failing on a missing file.
type servingCert struct {
	mu      sync.Mutex
	watcher *certwatcher.CertWatcher
}

func (s *servingCert) tlsOption(c *tls.Config) {
	c.GetCertificate = s.getCertificate
}

func (s *servingCert) getCertificate(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
	s.mu.Lock()
	w := s.watcher
	s.mu.Unlock()
	if w == nil {
		return nil, errors.New("the webhook serving certificate is not ready yet")
	}
	return w.GetCertificate(hello)
}

func (s *servingCert) ready(*http.Request) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.watcher == nil {
		return errors.New("the webhook serving certificate is not ready yet")
	}
	return nil
}

// watchWhenReady starts watching the certificate files once ready is
// closed, until ctx ends.
func (s *servingCert) watchWhenReady(ctx context.Context, ready <-chan struct{}, dir string) {
	log := ctrl.LoggerFrom(ctx).WithName("webhook-certs")
	select {
	case <-ctx.Done():
		return
	case <-ready:
	}
	w, err := certwatcher.New(filepath.Join(dir, certFile), filepath.Join(dir, keyFile))
	if err != nil {
		log.Error(err, "reading the webhook serving certificate")
		return
	}
	go func() {
		if err := w.Start(ctx); err != nil {
			log.Error(err, "watching the webhook serving certificate")
		}
	}()
	s.mu.Lock()
	s.watcher = w
	s.mu.Unlock()
	log.Info("webhook serving certificate ready", "dir", dir)
}

// addCertRotator makes the manager keep the webhook serving certificate:
// generated into a Secret, written to dir, rotated before it expires, and
// its CA written into the validating webhook configuration's caBundle.
func addCertRotator(ctx context.Context, mgr ctrl.Manager, cfg *configv1alpha1.Configuration, dir string, cert *servingCert) error {
	cm := cfg.Webhook.CertManagement
	ns := certNamespace(cfg)
	ready := make(chan struct{})
	r := &rotator.CertRotator{
		SecretKey:      types.NamespacedName{Namespace: ns, Name: cm.WebhookSecretName},
		CertDir:        dir,
		CAName:         "trainforge-ca",
		CAOrganization: "trainforge",
		DNSName:        fmt.Sprintf("%s.%s.svc", cm.WebhookServiceName, ns),
		ExtraDNSNames:  cm.ExtraDNSNames,
		IsReady:        ready,
		Webhooks: []rotator.WebhookInfo{{
			Name: cm.ValidatingWebhookConfigurationName,
			Type: rotator.Validating,
		}},
		FieldOwner: ControllerName,
		// Every replica serves webhooks, so every replica needs the
		// certificate, leader or not.
		RequireLeaderElection: false,
	}
	// The rotator keeps the certificate in an existing Secret; an install
	// may not have made one.
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: cm.WebhookSecretName}}
	if err := mgr.GetClient().Create(ctx, secret); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating Secret %s/%s for the webhook certificate (webhook.certManagement): %w", ns, cm.WebhookSecretName, err)
	}
	if err := rotator.AddRotator(mgr, r); err != nil {
		return fmt.Errorf("setting up the webhook certificate rotation (webhook.certManagement): %w", err)
	}
	go cert.watchWhenReady(ctx, ready, dir)
	go writeCertFiles(ctx, mgr.GetAPIReader(), r.SecretKey, dir, ready)
	return nil
}

// writeCertFiles copies the serving certificate and its CA (which the
// status endpoint publishes to trainer pods) from their Secret into dir
// whenever they differ, until ctx ends. In a pod the Secret is mounted at
// dir, read-only, and the kubelet keeps the files; a controller that runs
// outside the cluster (make demo) has no such mount, and the rotator waits
// for the files before it says the certificate is ready.
func writeCertFiles(ctx context.Context, reader client.Reader, key types.NamespacedName, dir string, ready <-chan struct{}) {
	log := ctrl.LoggerFrom(ctx).WithName("webhook-certs")
	interval := time.Second
	for {
		select {
		case <-ctx.Done():
			return
		case <-ready:
			interval = time.Minute // only rotations from now on
			// A closed channel is always ready: without this the loop
			// would read the Secret as fast as the API server answers.
			ready = nil
		case <-time.After(interval):
		}
		secret := &corev1.Secret{}
		if err := reader.Get(ctx, key, secret); err != nil {
			continue
		}
		for _, name := range []string{certFile, keyFile, caFile} {
			data := secret.Data[name]
			if len(data) == 0 {
				continue
			}
			path := filepath.Join(dir, name)
			if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
				continue
			}
			if err := writeFileAtomic(path, data); err != nil {
				if !errors.Is(err, fs.ErrPermission) && !errors.Is(err, syscall.EROFS) {
					log.Error(err, "writing the webhook serving certificate", "file", path)
				}
				continue
			}
		}
	}
}

// writeFileAtomic writes data to path through a file renamed into place,
// so that a reader never sees half a certificate.
func writeFileAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+"-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
