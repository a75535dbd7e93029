package webhook_test

import (
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/tickerdesk/tickerdesk/clients/notes/webhook"
)

// A receiver reads the raw body, verifies it before parsing it, and
// answers 2xx quickly; notes-svc retries anything else.
func Example() {
	secret := "whsec_..." // shown once, when the endpoint was created
	http.HandleFunc("/hooks/tickerdesk", func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil {
			http.Error(w, "unreadable body", http.StatusBadRequest)
			return
		}
		if err := webhook.Verify(secret, r.Header.Get(webhook.SignatureHeader), body, 5*time.Minute); err != nil {
			http.Error(w, "bad signature", http.StatusBadRequest)
			return
		}
		// Deliveries come at least once and in no set order: deduplicate
		// on the event id.
		fmt.Println("event", r.Header.Get(webhook.EventIDHeader))
		w.WriteHeader(http.StatusNoContent)
	})
}
