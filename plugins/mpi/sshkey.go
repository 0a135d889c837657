package mpi

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"fmt"

	"golang.org/x/crypto/ssh"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
)

// The SSH key Secret and how it is mounted: Kubeflow Trainer v2.3's names,
// file names and modes, which the runtimes' images expect.
const (
	SSHAuthSecretSuffix = "-mpi-ssh-auth"
	sshVolumeName       = "mpi-ssh-auth"
	SSHPublicKey        = "ssh-publickey" // the Secret's key of the public half
	sshDefaultMode      = int32(0o400)
	sshPrivateKeyMode   = int32(0o640) // group-readable: a non-root user reads it through the pod's fsGroup
	sshPublicKeyMode    = int32(0o644)
)

// sshVolume mounts the key as ssh and sshd look for it: the private key as
// id_rsa (ssh's default identity file, whatever the key type), the public
// key as id_rsa.pub and as authorized_keys, so that every pod accepts
// every other.
func sshVolume(job *trainer.TrainJob) corev1.Volume {
	return corev1.Volume{Name: sshVolumeName, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
		SecretName:  job.Name + SSHAuthSecretSuffix,
		DefaultMode: ptr.To(sshDefaultMode),
		Items: []corev1.KeyToPath{
			{Key: corev1.SSHAuthPrivateKey, Path: "id_rsa", Mode: ptr.To(sshPrivateKeyMode)},
			{Key: SSHPublicKey, Path: "id_rsa.pub", Mode: ptr.To(sshPublicKeyMode)},
			{Key: SSHPublicKey, Path: "authorized_keys", Mode: ptr.To(sshPublicKeyMode)},
		},
	}}}
}

// sshSecret returns an immutable Secret with a new key pair. Build returns
// a new one each time; the host creates only the first (framework.CreateOnce),
// so the pods' key stays the same for the TrainJob's whole life.
func sshSecret(info *framework.Info, job *trainer.TrainJob) (*unstructured.Unstructured, error) {
	private, public, err := newKeyPair()
	if err != nil {
		return nil, fmt.Errorf("generating the SSH key of TrainJob %s: %w", job.Name, err)
	}
	return framework.ToObject(info, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: job.Name + SSHAuthSecretSuffix},
		Type:       corev1.SecretTypeSSHAuth,
		Immutable:  ptr.To(true),
		Data:       map[string][]byte{corev1.SSHAuthPrivateKey: private, SSHPublicKey: public},
	}, secretGVK)
}

// newKeyPair returns an ECDSA P-521 private key in PEM (SEC 1, which
// OpenSSH reads) and its public key in authorized_keys format.
func newKeyPair() (private, public []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P521(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	pub, err := ssh.NewPublicKey(&key.PublicKey)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), ssh.MarshalAuthorizedKey(pub), nil
}
