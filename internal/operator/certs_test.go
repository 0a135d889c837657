package operator

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// countingReader answers every Get with a Secret holding a certificate and
// counts the Gets.
type countingReader struct{ gets atomic.Int64 }

func (r *countingReader) Get(_ context.Context, _ client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	r.gets.Add(1)
	obj.(*corev1.Secret).Data = map[string][]byte{certFile: []byte("cert"), keyFile: []byte("key")}
	return nil
}

func (r *countingReader) List(context.Context, client.ObjectList, ...client.ListOption) error {
	return nil
}

// Once the certificate is ready, the Secret is read once a minute, not in
// a loop (a closed channel is always ready in a select).
func TestWriteCertFilesWaitsOnceReady(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	ready := make(chan struct{})
	close(ready)
	r := &countingReader{}
	writeCertFiles(ctx, r, types.NamespacedName{Namespace: "ns", Name: "cert"}, t.TempDir(), ready)
	if n := r.gets.Load(); n > 2 {
		t.Errorf("the Secret was read %d times in half a second after the certificate was ready; want at most 2", n)
	}
}
