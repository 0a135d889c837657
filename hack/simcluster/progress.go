package simcluster

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
)

// ProgressOptions say how PlayTrainingProgress reports.
type ProgressOptions struct {
	// Namespace and TrainJob name the job whose trainer pod is played.
	Namespace, TrainJob string
	// StatusAddr is where the controller's status endpoint listens
	// (Trainforge.StatusAddr): the simulated cluster has no Service
	// network, so the connection goes there, while TLS still checks the
	// certificate against the host of the pod's URL.
	StatusAddr string
	// Steps is how many reports reach 100%, Every the time between two.
	Steps int
	Every time.Duration
}

// PlayTrainingProgress plays the part of the training container of the
// TrainJob's first running trainer pod, as far as progress goes: the
// simulated cluster has no kubelet. It does what the kubelet and Kubeflow
// Trainer's clients do together: reads the variables and the projected
// volume TrainJobStatus put in the pod's spec, gets a token bound to the
// pod with a TokenRequest, the CA from the ConfigMap the volume names, and
// POSTs progress to the URL until 100%, with a loss that falls. It returns
// once 100% is applied, or with the first answer that is neither 200 nor
// 429.
func (c *Cluster) PlayTrainingProgress(ctx context.Context, o ProgressOptions) error {
	pod, err := c.runningTrainerPod(ctx, o.Namespace, o.TrainJob)
	if err != nil {
		return err
	}
	ep, err := c.statusEndpointOf(ctx, pod)
	if err != nil {
		return err
	}
	for step := 1; step <= o.Steps; step++ {
		percent := int32(step * 100 / o.Steps)
		left := int32((o.Steps - step) * int(o.Every/time.Second))
		loss := fmt.Sprintf("%.3f", 2.0/float64(step+1))
		body, err := json.Marshal(trainer.UpdateTrainJobStatusRequest{TrainerStatus: &trainer.TrainerStatus{
			ProgressPercentage: ptr.To(percent), EstimatedRemainingSeconds: ptr.To(left),
			Metrics:         []trainer.Metric{{Name: "loss", Value: loss}, {Name: "step", Value: fmt.Sprint(step)}},
			LastUpdatedTime: metav1.NewTime(time.Now().Truncate(time.Second)),
		}})
		if err != nil {
			return err
		}
		for {
			code, answer, retry, err := ep.post(ctx, o.StatusAddr, body)
			if err != nil {
				return err
			}
			if code == http.StatusTooManyRequests {
				time.Sleep(retry)
				continue
			}
			if code != http.StatusOK {
				return fmt.Errorf("the status endpoint answered %d: %s", code, answer)
			}
			break
		}
		if step < o.Steps {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(o.Every):
			}
		}
	}
	return nil
}

// runningTrainerPod waits for a running pod of the TrainJob's JobSet whose
// container has the status endpoint's URL.
func (c *Cluster) runningTrainerPod(ctx context.Context, ns, name string) (*corev1.Pod, error) {
	var found *corev1.Pod
	err := poll(ctx, 5*time.Minute, "a running trainer pod of TrainJob "+ns+"/"+name, func() error {
		pods := &corev1.PodList{}
		if err := c.Client.List(ctx, pods, client.InNamespace(ns), client.MatchingLabels{jobsetv1alpha2.JobSetNameKey: name}); err != nil {
			return err
		}
		for i := range pods.Items {
			p := &pods.Items[i]
			if p.Status.Phase == corev1.PodRunning && envOf(p, trainer.StatusURLEnv) != "" {
				found = p
				return nil
			}
		}
		return fmt.Errorf("none of its %d pods runs with %s", len(pods.Items), trainer.StatusURLEnv)
	})
	return found, err
}

// statusEndpoint is what a training container finds in its pod.
type statusEndpoint struct {
	url   *url.URL
	token string
	roots *x509.CertPool
}

// statusEndpointOf reads the pod's spec as the kubelet would to fill the
// files the variables name: the token from a TokenRequest bound to the
// pod with the projected volume's audience, the CA from its ConfigMap.
func (c *Cluster) statusEndpointOf(ctx context.Context, pod *corev1.Pod) (*statusEndpoint, error) {
	u, err := url.Parse(envOf(pod, trainer.StatusURLEnv))
	if err != nil {
		return nil, fmt.Errorf("pod %s: %s: %w", pod.Name, trainer.StatusURLEnv, err)
	}
	tokenPath, caPath := envOf(pod, trainer.StatusTokenEnv), envOf(pod, trainer.StatusCACertEnv)
	var tokenSource *corev1.ServiceAccountTokenProjection
	var caSource *corev1.ConfigMapProjection
	for _, c := range pod.Spec.Containers {
		for _, m := range c.VolumeMounts {
			if !strings.HasPrefix(tokenPath, m.MountPath+"/") {
				continue
			}
			for _, v := range pod.Spec.Volumes {
				if v.Name != m.Name || v.Projected == nil {
					continue
				}
				for i, s := range v.Projected.Sources {
					switch {
					case s.ServiceAccountToken != nil && m.MountPath+"/"+s.ServiceAccountToken.Path == tokenPath:
						tokenSource = v.Projected.Sources[i].ServiceAccountToken
					case s.ConfigMap != nil && len(s.ConfigMap.Items) == 1 && m.MountPath+"/"+s.ConfigMap.Items[0].Path == caPath:
						caSource = v.Projected.Sources[i].ConfigMap
					}
				}
			}
		}
	}
	if tokenSource == nil || caSource == nil {
		return nil, fmt.Errorf("pod %s mounts no projected token at %s and CA at %s", pod.Name, tokenPath, caPath)
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: pod.Spec.ServiceAccountName}}
	if sa.Name == "" {
		sa.Name = "default"
	}
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		Audiences:         []string{tokenSource.Audience},
		ExpirationSeconds: tokenSource.ExpirationSeconds,
		BoundObjectRef:    &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID},
	}}
	if err := c.Client.SubResource("token").Create(ctx, sa, tr); err != nil {
		return nil, fmt.Errorf("requesting a token for pod %s: %w", pod.Name, err)
	}
	roots := x509.NewCertPool()
	err = poll(ctx, time.Minute, "the CA in ConfigMap "+pod.Namespace+"/"+caSource.Name, func() error {
		cm := &corev1.ConfigMap{}
		if err := c.Client.Get(ctx, client.ObjectKey{Namespace: pod.Namespace, Name: caSource.Name}, cm); err != nil {
			return err
		}
		if !roots.AppendCertsFromPEM([]byte(cm.Data[caSource.Items[0].Key])) {
			return fmt.Errorf("no certificate under key %s", caSource.Items[0].Key)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &statusEndpoint{url: u, token: tr.Status.Token, roots: roots}, nil
}

// post sends one report to addr, verifying the server as the URL's host.
func (e *statusEndpoint) post(ctx context.Context, addr string, body []byte) (int, string, time.Duration, error) {
	dialer := &net.Dialer{Timeout: 5 * time.Second}
	httpClient := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: e.roots, ServerName: e.url.Hostname(), MinVersion: tls.VersionTLS12},
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return dialer.DialContext(ctx, network, addr)
		},
	}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url.String(), bytes.NewReader(body))
	if err != nil {
		return 0, "", 0, err
	}
	req.Header.Set("Authorization", "Bearer "+e.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := httpClient.Do(req)
	if err != nil {
		return 0, "", 0, fmt.Errorf("posting to %s (at %s): %w", e.url, addr, err)
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(resp.Body)
	retry := time.Second
	if s, err := time.ParseDuration(resp.Header.Get("Retry-After") + "s"); err == nil {
		retry = s
	}
	return resp.StatusCode, string(answer), retry, nil
}

func envOf(pod *corev1.Pod, name string) string {
	for _, c := range pod.Spec.Containers {
		for _, e := range c.Env {
			if e.Name == name {
				return e.Value
			}
		}
	}
	return ""
}
