package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"
)

// auditEvent is the part of an audit.k8s.io/v1 Event the harness reads.
type auditEvent struct {
	Stage string `json:"stage"`
	Verb  string `json:"verb"`
	User  struct {
		Username string `json:"username"`
	} `json:"user"`
	ObjectRef *struct {
		Resource    string `json:"resource"`
		Subresource string `json:"subresource"`
	} `json:"objectRef"`
	ResponseStatus *struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
	RequestReceived time.Time `json:"requestReceivedTimestamp"`
}

// requests counts the controller user's requests in a time window.
type requests struct {
	// byVerb counts requests per verb; byResource per "verb resource".
	byVerb, byResource map[string]int
	conflicts          int
	total              int
}

// readOnly are the verbs that change nothing.
var readOnly = map[string]bool{"get": true, "list": true, "watch": true}

// reviews are the resources whose create only asks a question (of the
// authorizer) and stores nothing.
var reviews = map[string]bool{"selfsubjectaccessreviews": true, "selfsubjectrulesreviews": true, "subjectaccessreviews": true}

// writes is the number of requests that change something stored.
func (r requests) writes() int {
	n := 0
	for k, c := range r.byResource {
		verb, res, _ := strings.Cut(k, " ")
		if !readOnly[verb] && !(verb == "create" && reviews[res]) {
			n += c
		}
	}
	return n
}

// readAudit counts the requests of user received in [from, to]. A watch is
// counted when its response starts, every other request when it completes.
func readAudit(path, user string, from, to time.Time) (requests, error) {
	r := requests{byVerb: map[string]int{}, byResource: map[string]int{}}
	f, err := os.Open(path)
	if err != nil {
		return r, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e auditEvent
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return r, fmt.Errorf("%s: %w", path, err)
		}
		if e.User.Username != user || e.RequestReceived.Before(from) || e.RequestReceived.After(to) {
			continue
		}
		if (e.Verb == "watch") != (e.Stage == "ResponseStarted") {
			continue
		}
		if e.Verb != "watch" && e.Stage != "ResponseComplete" {
			continue
		}
		r.total++
		r.byVerb[e.Verb]++
		res := "?"
		if e.ObjectRef != nil {
			res = e.ObjectRef.Resource
			if e.ObjectRef.Subresource != "" {
				res += "/" + e.ObjectRef.Subresource
			}
		}
		r.byResource[e.Verb+" "+res]++
		if e.ResponseStatus != nil && e.ResponseStatus.Code == 409 {
			r.conflicts++
		}
	}
	return r, sc.Err()
}

// perJob formats counts divided by n, most frequent first, as
// "patch 1.00 · update 1.00".
func perJob(counts map[string]int, n int) string {
	type kv struct {
		k string
		v int
	}
	var list []kv
	for k, v := range counts {
		list = append(list, kv{k, v})
	}
	sort.Slice(list, func(i, j int) bool {
		if list[i].v != list[j].v {
			return list[i].v > list[j].v
		}
		return list[i].k < list[j].k
	})
	parts := make([]string, 0, len(list))
	for _, e := range list {
		parts = append(parts, fmt.Sprintf("%s %.2f", e.k, float64(e.v)/float64(max(n, 1))))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, " · ")
}
