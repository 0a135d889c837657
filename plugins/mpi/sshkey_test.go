package mpi

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/crypto/ssh"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
)

// TestSSHSecret: an immutable ssh-auth Secret, created once, whose two
// halves are one ECDSA key pair that ssh accepts.
func TestSSHSecret(t *testing.T) {
	job := newJob(&trainer.Trainer{NumNodes: ptr.To[int32](2)})
	_, objs, secret, _ := runObjects(t, runtimeSpec(t, deepspeed), job)

	if secret.Name != "train-mpi-ssh-auth" || secret.Type != corev1.SecretTypeSSHAuth || !ptr.Deref(secret.Immutable, false) {
		t.Errorf("Secret %q of type %q, immutable %v; want train-mpi-ssh-auth, kubernetes.io/ssh-auth, immutable", secret.Name, secret.Type, secret.Immutable)
	}
	if !objs[0].CreateOnce || objs[1].CreateOnce {
		t.Errorf("created once: Secret %v, ConfigMap %v; want the Secret only", objs[0].CreateOnce, objs[1].CreateOnce)
	}
	var keys []string
	for k := range secret.Data {
		keys = append(keys, k)
	}
	if diff := cmp.Diff([]string{"ssh-privatekey", "ssh-publickey"}, keys, sortStrings); diff != "" {
		t.Errorf("Secret keys (-want +got):\n%s", diff)
	}

	raw, err := ssh.ParseRawPrivateKey(secret.Data["ssh-privatekey"])
	if err != nil {
		t.Fatalf("ssh cannot read the private key: %v", err)
	}
	private, ok := raw.(*ecdsa.PrivateKey)
	if !ok || private.Curve != elliptic.P521() {
		t.Fatalf("private key is a %T, want an ECDSA P-521 key", raw)
	}
	public, _, _, rest, err := ssh.ParseAuthorizedKey(secret.Data["ssh-publickey"])
	if err != nil || len(rest) != 0 {
		t.Fatalf("the public key is not one authorized_keys line: %v (left over %q)", err, rest)
	}
	// The public half is the private half's: what one signs, the other
	// verifies.
	signer, err := ssh.NewSignerFromKey(private)
	if err != nil {
		t.Fatal(err)
	}
	data := []byte("mpirun")
	sig, err := signer.Sign(rand.Reader, data)
	if err != nil {
		t.Fatal(err)
	}
	if err := public.Verify(data, sig); err != nil {
		t.Errorf("the public key does not verify the private key's signature: %v", err)
	}
	if diff := cmp.Diff(signer.PublicKey().Marshal(), public.Marshal()); diff != "" {
		t.Errorf("public key (-of the private key +in the Secret):\n%s", diff)
	}
}

// TestSSHKeyIsNewEachBuild: only the host's create-once policy keeps the
// key; a Build that reused one would mean a key shared between TrainJobs.
func TestSSHKeyIsNewEachBuild(t *testing.T) {
	job := newJob(&trainer.Trainer{NumNodes: ptr.To[int32](2)})
	_, first, _ := run(t, runtimeSpec(t, deepspeed), job)
	_, second, _ := run(t, runtimeSpec(t, deepspeed), job)
	if string(first.Data["ssh-privatekey"]) == string(second.Data["ssh-privatekey"]) {
		t.Error("two Builds gave the same private key")
	}
}

var sortStrings = cmp.Transformer("sort", func(in []string) []string {
	out := append([]string(nil), in...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
})
