package badinput

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/trainforge/trainforge/internal/statusserver"
)

// checkpointRow is the body of a post to the status endpoint, decoded as
// the endpoint decodes it (statusserver.DecodeRequest); the message is
// the endpoint's answer, after its code.
func checkpointRow(desc, body, want string) row {
	return row{
		Input:   desc + ": " + codeSpan(body),
		Message: want,
		got: func(*testing.T) string {
			if _, err := statusserver.DecodeRequest([]byte(body), time.Now()); err != nil {
				return strconv.Itoa(http.StatusUnprocessableEntity) + " " + statusserver.InvalidPayload(err)
			}
			return "200 accepted"
		},
	}
}
