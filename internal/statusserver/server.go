package statusserver

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/internal/statusapply"
)

// +kubebuilder:rbac:groups=trainer.kubeflow.org,resources=trainjobs/status,verbs=patch

// FieldManager is the field manager of status.trainerStatus.
const FieldManager = "trainforge-status-server"

// MaxBodyBytes bounds a post's body, as Kubeflow Trainer does (64 KiB).
const MaxBodyBytes = 64 << 10

// Timeouts of a connection: a slow client cannot hold one long.
const (
	readTimeout     = 10 * time.Second
	writeTimeout    = 10 * time.Second
	idleTimeout     = 2 * time.Minute
	shutdownTimeout = 5 * time.Second
)

// Options are what a Server is built from.
type Options struct {
	// Addr is the address to listen on, host:port.
	Addr string
	// GetCertificate gives the serving certificate (the webhook server's).
	GetCertificate func(*tls.ClientHelloInfo) (*tls.Certificate, error)
	// Client creates TokenReviews and applies the status.
	Client client.Client
	// Reader reads TrainJobs, pods and JobSets from the API server.
	Reader client.Reader
	// MinUpdateInterval is the least time between two applied updates of
	// one TrainJob.
	MinUpdateInterval time.Duration
	// Clock is the limiter's clock; the real one when nil.
	Clock clock.Clock
	// Log is the server's logger.
	Log logr.Logger
}

// Server is the status endpoint, a manager.Runnable on every replica.
type Server struct {
	opts    Options
	auth    *authorizer
	limiter *updateLimiter
	http    *http.Server
	// listening is closed once the server accepts connections.
	listening chan struct{}
}

var (
	_ manager.Runnable               = (*Server)(nil)
	_ manager.LeaderElectionRunnable = (*Server)(nil)
)

// New returns the status endpoint.
func New(opts Options) (*Server, error) {
	switch {
	case opts.Addr == "":
		return nil, errors.New("status server: no address to listen on (statusServer.port)")
	case opts.GetCertificate == nil:
		return nil, errors.New("status server: no serving certificate; it serves with the webhook's (webhook.certDir or webhook.certManagement)")
	case opts.Client == nil || opts.Reader == nil:
		return nil, errors.New("status server: no API server client")
	case opts.MinUpdateInterval <= 0:
		return nil, fmt.Errorf("status server: minUpdateInterval %s must be more than 0", opts.MinUpdateInterval)
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	s := &Server{
		opts:      opts,
		auth:      &authorizer{client: opts.Client, reader: opts.Reader},
		limiter:   newUpdateLimiter(opts.MinUpdateInterval, opts.Clock),
		listening: make(chan struct{}),
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+trainer.StatusPath("{namespace}", "{name}"), s.handleStatus)
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		writeStatus(w, http.StatusNotFound, metav1.StatusReasonNotFound, "Not found: POST /apis/trainer.kubeflow.org/v1alpha1/namespaces/<namespace>/trainjobs/<name>/status")
	})
	s.http = &http.Server{
		Addr:              opts.Addr,
		Handler:           mux,
		TLSConfig:         &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: opts.GetCertificate},
		ReadHeaderTimeout: readTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
		ErrorLog:          slog.NewLogLogger(logr.ToSlogHandler(opts.Log), slog.LevelInfo),
	}
	return s, nil
}

// NeedLeaderElection is false: every replica serves, so that posts go on
// while the leader changes.
func (*Server) NeedLeaderElection() bool { return false }

// Start serves until ctx ends.
func (s *Server) Start(ctx context.Context) error {
	ln, err := net.Listen("tcp", s.opts.Addr)
	if err != nil {
		return fmt.Errorf("status server: listening on %s (statusServer.port): %w", s.opts.Addr, err)
	}
	close(s.listening)
	done := make(chan struct{})
	go func() {
		defer close(done)
		<-ctx.Done()
		shutdownCtx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
		defer cancel()
		if err := s.http.Shutdown(shutdownCtx); err != nil {
			s.opts.Log.Error(err, "shutting down the status server")
		}
	}()
	s.opts.Log.Info("serving the status endpoint", "address", ln.Addr().String())
	if err := s.http.ServeTLS(ln, "", ""); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("status server: %w", err)
	}
	<-done
	return nil
}

// Started is a readiness check: nil once the server listens.
func (s *Server) Started(*http.Request) error {
	select {
	case <-s.listening:
		return nil
	default:
		return errors.New("the status server is not listening yet")
	}
}

func (s *Server) handleStatus(w http.ResponseWriter, r *http.Request) {
	code := s.serve(w, r)
	requests.WithLabelValues(strconv.Itoa(code)).Inc()
}

// serve answers one post and returns the HTTP status it answered with.
func (s *Server) serve(w http.ResponseWriter, r *http.Request) int {
	ctx := r.Context()
	namespace, name := r.PathValue("namespace"), r.PathValue("name")
	log := s.opts.Log.WithValues("namespace", namespace, "trainjob", name)
	reply := func(code int, reason metav1.StatusReason, msg string) int {
		writeStatus(w, code, reason, msg)
		return code
	}
	internal := func(err error) int {
		log.Error(err, "status update failed")
		return reply(http.StatusInternalServerError, metav1.StatusReasonInternalError, "Internal error")
	}
	if r.ContentLength > MaxBodyBytes {
		return reply(http.StatusRequestEntityTooLarge, metav1.StatusReasonRequestEntityTooLarge, fmt.Sprintf("Payload too large: at most %d bytes", MaxBodyBytes))
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		return reply(http.StatusRequestEntityTooLarge, metav1.StatusReasonRequestEntityTooLarge, fmt.Sprintf("Payload too large: at most %d bytes", MaxBodyBytes))
	case err != nil:
		return reply(http.StatusBadRequest, metav1.StatusReasonBadRequest, "Reading the body: "+err.Error())
	}

	pod, err := s.auth.authenticate(ctx, bearerToken(r.Header.Get("Authorization")), namespace, name)
	if isForbidden(err) {
		log.V(1).Info("status update refused", "reason", err.Error())
		return reply(http.StatusForbidden, metav1.StatusReasonForbidden, "Forbidden")
	}
	if err != nil {
		return internal(err)
	}
	job := &trainer.TrainJob{}
	if err := s.opts.Reader.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, job); err != nil {
		if apierrors.IsNotFound(err) {
			return reply(http.StatusNotFound, metav1.StatusReasonNotFound, "Train job not found")
		}
		return internal(err)
	}
	if err := s.auth.checkPod(ctx, pod, job); isForbidden(err) {
		log.V(1).Info("status update refused", "reason", err.Error())
		return reply(http.StatusForbidden, metav1.StatusReasonForbidden, "Forbidden")
	} else if err != nil {
		return internal(err)
	}

	req, err := DecodeRequest(body, s.opts.Clock.Now())
	if err != nil {
		return reply(http.StatusUnprocessableEntity, metav1.StatusReasonInvalid, InvalidPayload(err))
	}
	if req.empty() {
		// Nothing to apply, as Kubeflow Trainer answers it.
		return writeJSON(w, http.StatusOK, response{})
	}
	release, wait := s.limiter.reserve(job.UID)
	if release == nil {
		seconds := int(math.Ceil(wait.Seconds()))
		w.Header().Set("Retry-After", strconv.Itoa(seconds))
		return reply(http.StatusTooManyRequests, metav1.StatusReasonTooManyRequests,
			fmt.Sprintf("Too many updates: TrainJob %s/%s takes one update per %s; retry in %ds", namespace, name, s.opts.MinUpdateInterval, seconds))
	}
	var applied response
	c := s.opts.Client
	if req.TrainerStatus != nil {
		applied.TrainerStatus, err = applyField(ctx, c, job, "trainerStatus", req.TrainerStatus, FieldManager,
			func(st *trainer.TrainJobStatus) *trainer.TrainerStatus { return st.TrainerStatus })
	}
	if err == nil && req.Checkpoint != nil {
		// After the progress, which the API server may refuse: a
		// refused post records no checkpoint either.
		applied.Checkpoint, err = applyField(ctx, c, job, "lastCheckpoint", req.Checkpoint, CheckpointFieldManager,
			func(st *trainer.TrainJobStatus) *trainer.CheckpointStatus { return st.LastCheckpoint })
	}
	if err == nil && req.RunStart != nil {
		applied.RunStart, err = applyField(ctx, c, job, "lastRunStart", req.RunStart, RunStartFieldManager,
			func(st *trainer.TrainJobStatus) *trainer.RunStartStatus { return st.LastRunStart })
	}
	if err != nil {
		release()
		var status apierrors.APIStatus
		switch {
		case apierrors.IsNotFound(err), apierrors.IsConflict(err):
			// Deleted, or deleted and created again under the same name
			// (the UID precondition), since it was read.
			return reply(http.StatusNotFound, metav1.StatusReasonNotFound, "Train job not found")
		case (apierrors.IsInvalid(err) || apierrors.IsBadRequest(err)) && errors.As(err, &status) && status.Status().Message != "":
			return reply(http.StatusUnprocessableEntity, metav1.StatusReasonInvalid, status.Status().Message)
		}
		return internal(err)
	}
	return writeJSON(w, http.StatusOK, applied)
}

// applyField writes status.<field> = value as manager (statusapply), and
// returns the field as the API server stored it (stored reads it from its
// answer), or value when the answer cannot be read: the update is applied
// all the same. trainerStatus is applied as FieldManager, a checkpoint as
// CheckpointFieldManager and a run start as RunStartFieldManager, so that
// a post without one of them leaves the last one; a missing
// lastUpdatedTime is left out, and the API server's rule names it.
func applyField[T any](ctx context.Context, c client.Client, job *trainer.TrainJob, field string, value *T, manager string, stored func(*trainer.TrainJobStatus) *T) (*T, error) {
	out, err := statusapply.Field(ctx, c, job, field, value, manager)
	if err != nil {
		return nil, err
	}
	if out != nil {
		if got := stored(&out.Status); got != nil {
			return got, nil
		}
	}
	return value, nil
}

func writeStatus(w http.ResponseWriter, code int, reason metav1.StatusReason, msg string) {
	writeJSON(w, code, metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusFailure, Message: msg, Reason: reason, Code: int32(code),
	})
}

func writeJSON(w http.ResponseWriter, code int, body any) int {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(body)
	return code
}
