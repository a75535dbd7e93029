package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"time"
)

// Headers of a delivery.
const (
	SignatureHeader = "Tickerdesk-Signature"
	EventIDHeader   = "Tickerdesk-Event-Id"
)

// Signature is the Tickerdesk-Signature value of body sent at t:
// "t=<unix seconds>" and one "v1=<hex HMAC-SHA256(secret, t.body)>" per
// secret (Stripe's scheme), so that during a rotation a receiver with
// either secret verifies it. clients/notes/webhook.Verify checks it.
func Signature(t time.Time, body []byte, secrets ...string) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	var b strings.Builder
	b.WriteString("t=")
	b.WriteString(ts)
	for _, s := range secrets {
		m := hmac.New(sha256.New, []byte(s))
		m.Write([]byte(ts))
		m.Write([]byte{'.'})
		m.Write(body)
		b.WriteString(",v1=")
		b.WriteString(hex.EncodeToString(m.Sum(nil)))
	}
	return b.String()
}
