package install

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	frameworkruntime "github.com/trainforge/trainforge/framework/runtime"
	"github.com/trainforge/trainforge/internal/controller"
	"github.com/trainforge/trainforge/internal/goodput"
)

// prometheusOperatorModule holds the Prometheus Operator's CRDs, which the
// install test puts on its API server so that the chart's ServiceMonitor
// and PrometheusRule are checked against their real schemas.
const prometheusOperatorModule = "github.com/prometheus-operator/prometheus-operator@v0.85.0"

// monitoringCRDs returns the CRDs of the kinds the chart may render:
// ServiceMonitor and PrometheusRule.
func monitoringCRDs(t *testing.T) []*unstructured.Unstructured {
	t.Helper()
	out, err := exec.Command("go", "mod", "download", "-json", prometheusOperatorModule).Output()
	if err != nil {
		t.Fatalf("go mod download %s: %v", prometheusOperatorModule, err)
	}
	var mod struct{ Dir, Error string }
	if err := json.Unmarshal(out, &mod); err != nil || mod.Dir == "" {
		t.Fatalf("go mod download %s: %v %s", prometheusOperatorModule, err, mod.Error)
	}
	var crds []*unstructured.Unstructured
	for _, kind := range []string{"servicemonitors", "prometheusrules"} {
		data, err := os.ReadFile(filepath.Join(mod.Dir, "example", "prometheus-operator-crd-full", "monitoring.coreos.com_"+kind+".yaml"))
		if err != nil {
			t.Fatal(err)
		}
		crds = append(crds, objects(t, data)...)
	}
	return crds
}

// registeredMetrics returns the names of the series the controller serves:
// those of the plugins and of the TrainJob controller, with the series
// of a histogram (_bucket, _sum, _count).
func registeredMetrics(t *testing.T) map[string]bool {
	t.Helper()
	fqName := regexp.MustCompile(`fqName: "([^"]+)"`)
	names := map[string]bool{}
	for _, c := range slices.Concat(frameworkruntime.Collectors(), controller.Collectors(), goodput.Collectors()) {
		ch := make(chan *prometheus.Desc, 16)
		go func() { c.Describe(ch); close(ch) }()
		for d := range ch {
			m := fqName.FindStringSubmatch(d.String())
			if m == nil {
				t.Fatalf("no name in %s", d)
			}
			names[m[1]] = true
			for _, suffix := range []string{"_bucket", "_sum", "_count"} {
				names[m[1]+suffix] = true
			}
		}
	}
	if !names["trainforge_trainjobs"] || !names["trainforge_plugin_calls_total"] {
		t.Fatalf("the registered metrics miss the controller's or the plugins': %v", names)
	}
	return names
}

var (
	promqlStrings   = regexp.MustCompile(`"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|` + "`[^`]*`")
	promqlMatchers  = regexp.MustCompile(`\{[^}]*\}`)
	promqlRanges    = regexp.MustCompile(`\[[^\]]*\]`)
	promqlGroupings = regexp.MustCompile(`\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)`)
	grafanaVars     = regexp.MustCompile(`\$\{?\w+\}?`)
	promqlWords     = regexp.MustCompile(`[A-Za-z0-9_:.]+\s*\(?`)
	promqlKeywords  = map[string]bool{"and": true, "or": true, "unless": true, "bool": true, "offset": true, "by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true, "inf": true, "nan": true}
)

// metricNames returns the metric names a PromQL expression selects: what
// is left once strings, label matchers, ranges, groupings, Grafana
// variables, function calls, keywords and numbers are taken out.
func metricNames(expr string) []string {
	expr = promqlStrings.ReplaceAllString(expr, `""`)
	expr = promqlMatchers.ReplaceAllString(expr, " ")
	expr = promqlRanges.ReplaceAllString(expr, " ")
	expr = promqlGroupings.ReplaceAllString(expr, " ")
	expr = grafanaVars.ReplaceAllString(expr, " ")
	var out []string
	for _, w := range promqlWords.FindAllString(expr, -1) {
		if strings.HasSuffix(w, "(") {
			continue // a function or an aggregation
		}
		w = strings.TrimSpace(w)
		if promqlKeywords[strings.ToLower(w)] || (w[0] >= '0' && w[0] <= '9') || w[0] == '.' {
			continue
		}
		out = append(out, w)
	}
	return out
}

func TestMetricNamesOfPromQL(t *testing.T) {
	for expr, want := range map[string][]string{
		`sum by (runtime, le) (rate(trainforge_x_bucket{runtime=~"$runtime", state="a b"}[$__rate_interval]))`: {"trainforge_x_bucket"},
		`histogram_quantile(0.95, sum by (le) (rate(a_bucket[5m]))) > 0.5 and on (x) b offset 1h`:              {"a_bucket", "b"},
		`max without (instance) (c) unless d[1d:5m] * 2`:                                                       {"c", "d"},
	} {
		if got := metricNames(expr); !slices.Equal(got, want) {
			t.Errorf("metricNames(%q) = %q, want %q", expr, got, want)
		}
	}
}

// checkNames fails for every metric expr selects that the controller does
// not serve, and returns those it does.
func checkNames(t *testing.T, registered map[string]bool, where, expr string) []string {
	t.Helper()
	names := metricNames(expr)
	if len(names) == 0 {
		t.Errorf("%s: no metric in %q", where, expr)
	}
	for _, n := range names {
		if !registered[n] {
			t.Errorf("%s: %s is not a metric of the controller (expression %q)", where, n, expr)
		}
	}
	return names
}

// dashboardPanel is what the test reads of a Grafana panel.
type dashboardPanel struct {
	Title      string            `json:"title"`
	Type       string            `json:"type"`
	Datasource *json.RawMessage  `json:"datasource"`
	Panels     []dashboardPanel  `json:"panels"`
	Targets    []dashboardTarget `json:"targets"`
}

type dashboardTarget struct {
	Expr       string           `json:"expr"`
	Datasource *json.RawMessage `json:"datasource"`
}

type dashboard struct {
	Title      string           `json:"title"`
	UID        string           `json:"uid"`
	Panels     []dashboardPanel `json:"panels"`
	Templating struct {
		List []struct {
			Name       string          `json:"name"`
			Type       string          `json:"type"`
			Query      json.RawMessage `json:"query"`
			Definition string          `json:"definition"`
		} `json:"list"`
	} `json:"templating"`
}

const datasourceRef = `{"type":"prometheus","uid":"${datasource}"}`

func sameJSON(t *testing.T, raw *json.RawMessage, want string) bool {
	t.Helper()
	if raw == nil {
		return false
	}
	var a, b any
	if json.Unmarshal(*raw, &a) != nil || json.Unmarshal([]byte(want), &b) != nil {
		return false
	}
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// TestDashboard checks the Grafana dashboard the chart ships: it parses,
// has a Prometheus data source variable that every panel uses, and every
// query names only metrics the controller serves; and every lifecycle and
// plugin metric has a panel.
func TestDashboard(t *testing.T) {
	data := mustRead(t, "charts/trainforge/dashboards/trainforge.json")
	var d dashboard
	dec := json.NewDecoder(strings.NewReader(string(data)))
	if err := dec.Decode(&d); err != nil {
		t.Fatalf("the dashboard is not JSON: %v", err)
	}
	if d.Title == "" || d.UID == "" {
		t.Errorf("the dashboard has no title or uid: %q %q", d.Title, d.UID)
	}
	registered := registeredMetrics(t)
	shown := map[string]bool{}

	var datasourceVar bool
	for _, v := range d.Templating.List {
		switch {
		case v.Name == "datasource":
			datasourceVar = v.Type == "datasource" && string(v.Query) == `"prometheus"`
		case v.Type == "query":
			m := regexp.MustCompile(`^label_values\((\w+),\s*\w+\)$`).FindStringSubmatch(v.Definition)
			if m == nil || !registered[m[1]] {
				t.Errorf("variable %s: %q is not label_values of a metric of the controller", v.Name, v.Definition)
			}
		}
	}
	if !datasourceVar {
		t.Error(`the dashboard has no variable "datasource" of type datasource for Prometheus`)
	}

	var walk func(panels []dashboardPanel)
	walk = func(panels []dashboardPanel) {
		for _, p := range panels {
			if p.Type == "row" {
				walk(p.Panels)
				continue
			}
			if len(p.Targets) == 0 {
				t.Errorf("panel %q has no query", p.Title)
			}
			if !sameJSON(t, p.Datasource, datasourceRef) {
				t.Errorf("panel %q does not use the datasource variable", p.Title)
			}
			for _, target := range p.Targets {
				if !sameJSON(t, target.Datasource, datasourceRef) {
					t.Errorf("a query of panel %q does not use the datasource variable", p.Title)
				}
				for _, n := range checkNames(t, registered, "panel "+p.Title, target.Expr) {
					shown[strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(n, "_bucket"), "_count"), "_sum")] = true
				}
			}
		}
	}
	walk(d.Panels)

	var missing []string
	for n := range registered {
		if strings.HasSuffix(n, "_bucket") || strings.HasSuffix(n, "_sum") || strings.HasSuffix(n, "_count") {
			continue
		}
		// One series per TrainJob: for an admin's own queries only.
		if !shown[n] && n != "trainforge_trainjob_state" {
			missing = append(missing, n)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("no panel shows %v", missing)
	}
}

// TestMonitoringResources checks what ci/monitoring-values.yaml renders:
// the ServiceMonitor selects the metrics Service by its port, the
// PrometheusRule's expressions name only metrics the controller serves,
// and the dashboard ConfigMap is labelled for Grafana's sidecar and holds
// the dashboard. Each is absent with the default values.
func TestMonitoringResources(t *testing.T) {
	objs := objects(t, helmTemplate(t, "charts/trainforge/ci/monitoring-values.yaml"))
	registered := registeredMetrics(t)

	svc := find(t, objs, "Service", "trainforge-controller-metrics")
	sm := find(t, objs, "ServiceMonitor", "trainforge-controller")
	selector, _, _ := unstructured.NestedStringMap(sm.Object, "spec", "selector", "matchLabels")
	for k, v := range selector {
		if svc.GetLabels()[k] != v {
			t.Errorf("the ServiceMonitor selects %s=%s, which the metrics Service does not carry (%v)", k, v, svc.GetLabels())
		}
	}
	endpoints, _, _ := unstructured.NestedSlice(sm.Object, "spec", "endpoints")
	ports, _, _ := unstructured.NestedSlice(svc.Object, "spec", "ports")
	if len(endpoints) != 1 || len(ports) != 1 || endpoints[0].(map[string]any)["port"] != ports[0].(map[string]any)["name"] {
		t.Errorf("the ServiceMonitor's endpoints %v do not scrape the Service's port %v", endpoints, ports)
	}
	if sm.GetLabels()["release"] != "kube-prometheus-stack" {
		t.Errorf("the ServiceMonitor lacks metrics.serviceMonitor.labels: %v", sm.GetLabels())
	}

	rule := find(t, objs, "PrometheusRule", "trainforge-controller")
	groups, _, _ := unstructured.NestedSlice(rule.Object, "spec", "groups")
	var alerts []string
	for _, g := range groups {
		rules, _, _ := unstructured.NestedSlice(g.(map[string]any), "rules")
		for _, r := range rules {
			r := r.(map[string]any)
			alert, _ := r["alert"].(string)
			alerts = append(alerts, alert)
			expr, _ := r["expr"].(string)
			checkNames(t, registered, "alert "+alert, expr)
			labels, _ := r["labels"].(map[string]any)
			if labels["team"] != "ml-platform" || labels["severity"] == nil {
				t.Errorf("alert %s: labels %v, want a severity and metrics.prometheusRule.alertLabels", alert, labels)
			}
		}
	}
	want := []string{"TrainforgeTrainJobsFailing", "TrainforgeTrainJobsNotStarting", "TrainforgeTrainJobLowGoodput", "TrainforgePluginFailing", "TrainforgePluginRestarting"}
	if !slices.Equal(alerts, want) {
		t.Errorf("alerts %v, want %v", alerts, want)
	}

	cm := find(t, objs, "ConfigMap", "trainforge-dashboard")
	if cm.GetLabels()["grafana_dashboard"] != "1" {
		t.Errorf("the dashboard ConfigMap is not labelled grafana_dashboard: \"1\": %v", cm.GetLabels())
	}
	inMap, _, _ := unstructured.NestedString(cm.Object, "data", "trainforge.json")
	file := mustRead(t, "charts/trainforge/dashboards/trainforge.json")
	var a, b any
	if err := json.Unmarshal([]byte(inMap), &a); err != nil {
		t.Fatalf("the ConfigMap's trainforge.json is not JSON: %v", err)
	}
	if err := json.Unmarshal(file, &b); err != nil {
		t.Fatal(err)
	}
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	if string(x) != string(y) {
		t.Error("the ConfigMap does not hold charts/trainforge/dashboards/trainforge.json")
	}

	config := find(t, objs, "ConfigMap", "trainforge-controller-config")
	if text, _, _ := unstructured.NestedString(config.Object, "data", "config.yaml"); !strings.Contains(text, "perTrainJob: true") {
		t.Errorf("metrics.perTrainJob does not reach the configuration file:\n%s", text)
	}

	for _, o := range objects(t, helmTemplate(t, "charts/trainforge/ci/default-values.yaml")) {
		if k := o.GetKind(); k == "ServiceMonitor" || k == "PrometheusRule" || (k == "ConfigMap" && o.GetName() == "trainforge-dashboard") {
			t.Errorf("the default values render %s", objName(o))
		}
	}
	if _, err := helmTemplateErr(t, []string{"metrics.serviceMonitor.enabled=true", "metrics.service.enabled=false"}); err == nil || !strings.Contains(err.Error(), "metrics.serviceMonitor.enabled") {
		t.Errorf("a ServiceMonitor without the metrics Service: %v, want an error naming metrics.serviceMonitor.enabled", err)
	}

	// The goodput alert: its thresholds (defaults, then set) reach its
	// expression, which leaves out the finished TrainJobs (their elapsed
	// time no longer grows).
	checkGoodput := func(objs []*unstructured.Unstructured, ratio, minElapsed string) {
		t.Helper()
		r := alertRule(t, find(t, objs, "PrometheusRule", "trainforge-controller"), "TrainforgeTrainJobLowGoodput")
		expr, _ := r["expr"].(string)
		for _, want := range []string{
			"(trainforge_trainjob_goodput_ratio) < " + ratio + "\n",
			"(trainforge_trainjob_goodput_elapsed_seconds) >= " + minElapsed + "\n",
			"(delta(trainforge_trainjob_goodput_elapsed_seconds[5m])) > 0",
		} {
			if !strings.Contains(expr, want) {
				t.Errorf("TrainforgeTrainJobLowGoodput's expression %q lacks %q", expr, want)
			}
		}
		if r["for"] != "15m" {
			t.Errorf("TrainforgeTrainJobLowGoodput: for %v, want 15m", r["for"])
		}
	}
	checkGoodput(objs, "0.8", "1800")
	set, err := helmTemplateErr(t, []string{"metrics.prometheusRule.enabled=true", "metrics.prometheusRule.goodputRatio=0.5", "metrics.prometheusRule.goodputMinElapsedSeconds=600"})
	if err != nil {
		t.Fatal(err)
	}
	checkGoodput(objects(t, set), "0.5", "600")
}

// alertRule returns the rule of a PrometheusRule that defines alert.
func alertRule(t *testing.T, rule *unstructured.Unstructured, alert string) map[string]any {
	t.Helper()
	groups, _, _ := unstructured.NestedSlice(rule.Object, "spec", "groups")
	for _, g := range groups {
		rules, _, _ := unstructured.NestedSlice(g.(map[string]any), "rules")
		for _, r := range rules {
			if r := r.(map[string]any); r["alert"] == alert {
				return r
			}
		}
	}
	t.Fatalf("no alert %s in %s", alert, objName(rule))
	return nil
}
