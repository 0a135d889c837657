package integration

import (
	"net/http"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
)

// controllerWrites records the controller's writes (method, path and the
// media type the API server answered in), through its rest.Config.
var controllerWrites = &writeRecorder{}

type recordedWrite struct {
	// asked is the request's Accept header, answeredAs the answer's
	// Content-Type.
	method, path, asked, answeredAs string
}

type writeRecorder struct {
	mu     sync.Mutex
	writes []recordedWrite
}

func (w *writeRecorder) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(req)
		if err == nil && req.Method != http.MethodGet {
			w.mu.Lock()
			w.writes = append(w.writes, recordedWrite{req.Method, req.URL.Path, req.Header.Get("Accept"), resp.Header.Get("Content-Type")})
			w.mu.Unlock()
		}
		return resp, err
	})
}

// to returns the writes to one path.
func (w *writeRecorder) to(path string) []recordedWrite {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []recordedWrite
	for _, r := range w.writes {
		if r.path == path {
			out = append(out, r)
		}
	}
	return out
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

var _ = Describe("the writes a new TrainJob costs", func() {
	// Decoding the answers of these two writes (a JobSet with its pod
	// templates, a TrainJob with its runtime snapshot) was a third of the
	// controller's allocations in a burst; it reads only their metadata.
	// A custom resource is only ever served as JSON: an answer in
	// protobuf is the PartialObjectMetadata the request asked for.
	It("are its JobSet's apply and its status write, each answered with the object's metadata only", func() {
		ns := createExample("seed-plainml.yaml")
		Eventually(func(g Gomega) {
			job := trainJobOf(ns, "first-job")(g)
			c := conditionOf(job, trainer.TrainJobCreated)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
		}).Should(Succeed())

		jobSet := controllerWrites.to("/apis/jobset.x-k8s.io/v1alpha2/namespaces/" + ns + "/jobsets/first-job")
		Expect(jobSet).NotTo(BeEmpty(), "no write of JobSet first-job")
		Expect(jobSet[0].method).To(Equal(http.MethodPatch))
		Expect(jobSet[0].asked).To(ContainSubstring("as=PartialObjectMetadata"))
		Expect(jobSet[0].answeredAs).To(Equal("application/vnd.kubernetes.protobuf"))

		// The write is recorded when its answer has reached the
		// controller, which can be after a reader sees the condition.
		var status []recordedWrite
		Eventually(func() []recordedWrite {
			status = controllerWrites.to("/apis/trainer.kubeflow.org/v1alpha1/namespaces/" + ns + "/trainjobs/first-job/status")
			return status
		}).ShouldNot(BeEmpty(), "no status write of TrainJob first-job")
		for _, w := range status {
			Expect(w.method).To(Equal(http.MethodPatch), "a status write of %s", ns)
			Expect(w.asked).To(ContainSubstring("as=PartialObjectMetadata"))
			Expect(w.answeredAs).To(Equal("application/vnd.kubernetes.protobuf"))
		}
		// And what was written is whole: the status carries its snapshot.
		Expect(trainJobOf(ns, "first-job")(Default).Status.RuntimeSnapshot).NotTo(BeNil())
	})
})
