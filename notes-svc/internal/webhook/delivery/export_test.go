package delivery

import (
	"context"
	"net/http"
	"time"
)

// SendOnce makes one attempt with client, for the tests of the response
// cap; it returns the status and how many bytes of the answer were read.
func SendOnce(ctx context.Context, client *http.Client, url string, body []byte) (int, int64, error) {
	r := (&sender{client: client, userAgent: "test"}).send(ctx, url, "evt_test", body, []string{"whsec_test"}, time.Now())
	return r.status, r.read, r.err
}
