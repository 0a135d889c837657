package flux

import (
	_ "embed"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/pelletier/go-toml/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	trainer "github.com/trainforge/trainforge/api/trainer/v1alpha1"
	"github.com/trainforge/trainforge/framework"
)

var (
	//go:embed templates/init.sh
	initScript string
	//go:embed templates/entrypoint.sh
	entrypointScript string

	initTemplate       = mustParseScript(InitKey, initScript)
	entrypointTemplate = mustParseScript(EntrypointKey, entrypointScript)
)

// scriptFields are the names a script template may use, as {{.Name}}.
var scriptFields = []string{"Job", "Root", "Software", "Curve", "CurveKey", "Hosts", "Broker", "Lead", "Resources", "RunFlags"}

// scriptTemplate is a script with {{.Name}} fields (scriptFields) and no
// other action. The scripts need nothing more, and text/template would
// cost the WebAssembly module about 16 MB: its use of reflection's
// method lookup keeps every exported method of every type in the module.
type scriptTemplate struct {
	name, text string
}

var scriptAction = regexp.MustCompile(`{{[^}]*}}`)

// mustParseScript returns the template, and panics, as template.Must, on
// an action other than a known field.
func mustParseScript(name, text string) scriptTemplate {
	for _, a := range scriptAction.FindAllString(text, -1) {
		field, ok := strings.CutPrefix(a[2:len(a)-2], ".")
		if !ok || !slices.Contains(scriptFields, field) {
			panic(fmt.Sprintf("script %s: %s is not one of the fields {{.%s}}", name, a, strings.Join(scriptFields, "}}, {{.")))
		}
	}
	return scriptTemplate{name: name, text: text}
}

// execute returns the script with each field replaced by its value in
// data, which has every field of scriptFields.
func (t scriptTemplate) execute(data map[string]string) (string, error) {
	pairs := make([]string, 0, 2*len(scriptFields))
	for _, f := range scriptFields {
		v, ok := data[f]
		if !ok {
			return "", fmt.Errorf("script %s: no value for {{.%s}}", t.name, f)
		}
		pairs = append(pairs, "{{."+f+"}}", v)
	}
	return strings.NewReplacer(pairs...).Replace(t.text), nil
}

// Where the brokers keep their configuration, in the shared volume.
const (
	configRoot     = InstallDir + "/config"
	resourcePath   = configRoot + "/etc/flux/system/R"
	curveCertPath  = configRoot + "/etc/curve/" + CurveCertKey
	jobArchivePath = configRoot + "/var/lib/flux/job-archive.sqlite"
	// clusterDomain is the cluster's DNS domain, which Kubeflow Trainer
	// assumes too.
	clusterDomain = "cluster.local"
)

// brokerConfig is the brokers' TOML configuration (flux-config(5)), as
// Kubeflow Trainer writes it.
type brokerConfig struct {
	Access struct {
		AllowGuestUser bool `toml:"allow-guest-user"`
		AllowRootOwner bool `toml:"allow-root-owner"`
	} `toml:"access"`
	Resource struct {
		Path string `toml:"path"`
	} `toml:"resource"`
	Bootstrap struct {
		CurveCert      string          `toml:"curve_cert"`
		DefaultPort    int             `toml:"default_port"`
		DefaultBind    string          `toml:"default_bind"`
		DefaultConnect string          `toml:"default_connect"`
		Hosts          []bootstrapHost `toml:"hosts,inline"`
	} `toml:"bootstrap"`
	Archive struct {
		DBPath      string `toml:"dbpath"`
		Period      string `toml:"period"`
		BusyTimeout string `toml:"busytimeout"`
	} `toml:"archive"`
	Qmanager struct {
		QueuePolicy string `toml:"queue-policy"`
	} `toml:"sched-fluxion-qmanager"`
}

type bootstrapHost struct {
	Host string `toml:"host"`
}

// hosts is the TrainJob's pods as one Flux hostlist, the lead first:
// <trainjob>-<replicatedJob>-0-[0-<n-1>], the hostnames JobSet gives them.
func (p *plan) hosts(job *trainer.TrainJob) string {
	return fmt.Sprintf("%s-%s-0-[%s]", job.Name, p.ps.Name, idRange(int64(p.nodes)))
}

// idRange is a Flux idset of 0 to n-1: "0", or "0-<n-1>".
func idRange(n int64) string {
	if n == 1 {
		return "0"
	}
	return fmt.Sprintf("0-%d", n-1)
}

// lead returns the lead pod's hostname and the pods' DNS subdomain, from
// the first pod's DNS name.
func (p *plan) lead() (host, subdomain string, err error) {
	first, err := p.ps.FirstEndpoint()
	if err != nil {
		return "", "", err
	}
	host, subdomain, _ = strings.Cut(first, ".")
	return host, subdomain, nil
}

func (p *plan) brokerTOML(job *trainer.TrainJob, subdomain string) (string, error) {
	var c brokerConfig
	c.Access.AllowGuestUser, c.Access.AllowRootOwner = true, true
	c.Resource.Path = resourcePath
	b := &c.Bootstrap
	b.CurveCert = curveCertPath
	b.DefaultPort = BrokerPort
	// %h and %p are the host and the port, which Flux fills in.
	b.DefaultBind = "tcp://" + p.networkDevice + ":%p"
	b.DefaultConnect = fmt.Sprintf("tcp://%%h.%s.%s.svc.%s:%%p", subdomain, job.Namespace, clusterDomain)
	b.Hosts = []bootstrapHost{{Host: p.hosts(job)}}
	c.Archive.DBPath, c.Archive.Period, c.Archive.BusyTimeout = jobArchivePath, "1m", "50s"
	c.Qmanager.QueuePolicy = p.queuePolicy
	out, err := toml.Marshal(c)
	return string(out), err
}

// resources are the flux R encode options of one node: a core per task,
// and its GPUs.
func (p *plan) resources() string {
	r := "--cores=" + idRange(int64(p.tasksPerNode))
	if p.gpusPerNode > 0 {
		r += " --gpu=" + idRange(p.gpusPerNode)
	}
	return r
}

// runFlags are the flux run options of the training command: every node,
// numProcPerNode tasks on each, and each task's share of the GPUs.
func (p *plan) runFlags() string {
	f := fmt.Sprintf("-N %d -n %d", p.nodes, int64(p.nodes)*int64(p.tasksPerNode))
	if p.gpusPerTask > 0 {
		f += fmt.Sprintf(" -g %d", p.gpusPerTask)
	}
	return f
}

// scriptsConfigMap returns the ConfigMap <trainjob>-flux-entrypoint: the
// installer's init.sh and the training container's entrypoint.sh.
func scriptsConfigMap(info *framework.Info, job *trainer.TrainJob, p *plan) (*unstructured.Unstructured, error) {
	lead, subdomain, err := p.lead()
	if err != nil {
		return nil, err
	}
	broker, err := p.brokerTOML(job, subdomain)
	if err != nil {
		return nil, fmt.Errorf("writing the Flux broker configuration of TrainJob %s: %w", job.Name, err)
	}
	data := map[string]string{
		"Job": job.Name, "Root": InstallDir, "Software": SoftwareDir, "Curve": curveDir, "CurveKey": CurveCertKey,
		"Hosts": p.hosts(job), "Broker": broker, "Lead": lead,
		"Resources": p.resources(), "RunFlags": p.runFlags(),
	}
	scripts := map[string]string{}
	for key, t := range map[string]scriptTemplate{InitKey: initTemplate, EntrypointKey: entrypointTemplate} {
		out, err := t.execute(data)
		if err != nil {
			return nil, fmt.Errorf("writing %s of TrainJob %s: %w", key, job.Name, err)
		}
		scripts[key] = out
	}
	return framework.ToObject(info, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: job.Name + EntrypointConfigMapSuffix},
		Data:       scripts,
	}, configMapGVK)
}
