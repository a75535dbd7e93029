package webhook_test

import (
	"fmt"
	"net/http"
	"time"

	"github.com/tickerdesk/tickerdesk/clients/notes/webhook"
)

// A receiver reads the raw body, verifies it before parsing it, and
// answers 2xx quickly; notes-svc retries anything else.
func Example() {
	secret := "whsec_..." // shown once, when the endpoint was created
	http.HandleFunc("/hooks/tickerdesk", func(w http.ResponseWriter, r *http.Request) {
		ev, err := webhook.ReadEvent(r, secret, 5*time.Minute)
		if err != nil {
			http.Error(w, "bad signature", http.StatusBadRequest)
			return
		}
		// Deliveries come at least once and in no set order: deduplicate
		// on the event id.
		fmt.Println(ev.ID, ev.Type, ev.ObjectID())
		w.WriteHeader(http.StatusNoContent)
	})
}
