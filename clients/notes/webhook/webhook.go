// Package webhook verifies and reads the webhooks notes-svc sends. Each delivery
// carries Tickerdesk-Signature: t=<unix seconds>,v1=<hex>[,v1=<hex>], where
// each v1 is HMAC-SHA256 under an endpoint secret (whsec_...) of the
// timestamp, a dot and the raw request body; during a secret rotation two
// v1 are sent, one per secret. Verify accepts a delivery when any v1
// matches the secret and the timestamp is recent, which refuses forged
// bodies and replays of old deliveries.
package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Header names of a delivery.
const (
	SignatureHeader = "Tickerdesk-Signature"
	EventIDHeader   = "Tickerdesk-Event-Id"
)

// DefaultTolerance is the age Stripe accepts, and what a tolerance of
// zero means to Verify.
const DefaultTolerance = 5 * time.Minute

// Errors of Verify.
var (
	// ErrMissingHeader is a delivery without the signature header.
	ErrMissingHeader = errors.New("webhook: missing Tickerdesk-Signature header")
	// ErrMalformedHeader is a header that is not t=...,v1=....
	ErrMalformedHeader = errors.New("webhook: malformed Tickerdesk-Signature header")
	// ErrNoMatch is a signature made with another secret or over
	// another body.
	ErrNoMatch = errors.New("webhook: no signature matches the secret and body")
	// ErrTimestamp is a timestamp outside the tolerance: a replay, or a
	// clock far off.
	ErrTimestamp = errors.New("webhook: timestamp outside the tolerance")
)

// Verify checks header, the Tickerdesk-Signature value, against body (the
// raw request body, unparsed) and secret, and that its timestamp is within
// tolerance of now (DefaultTolerance when zero).
func Verify(secret string, header string, body []byte, tolerance time.Duration) error {
	return verifyAt(secret, header, body, tolerance, time.Now())
}

func verifyAt(secret, header string, body []byte, tolerance time.Duration, now time.Time) error {
	if tolerance <= 0 {
		tolerance = DefaultTolerance
	}
	if strings.TrimSpace(header) == "" {
		return ErrMissingHeader
	}
	var ts string
	var sigs [][]byte
	for part := range strings.SplitSeq(header, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return ErrMalformedHeader
		}
		switch k {
		case "t":
			if ts != "" {
				return ErrMalformedHeader
			}
			ts = v
		case "v1":
			sig, err := hex.DecodeString(v)
			if err != nil || len(sig) != sha256.Size {
				return ErrMalformedHeader
			}
			sigs = append(sigs, sig)
		}
		// Other schemes (v0, future versions) are ignored, as Stripe's are.
	}
	if ts == "" || len(sigs) == 0 {
		return ErrMalformedHeader
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return ErrMalformedHeader
	}
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(ts))
	m.Write([]byte{'.'})
	m.Write(body)
	want := m.Sum(nil)
	matched := false
	for _, sig := range sigs {
		// Every signature is compared, in constant time, so the time taken
		// says nothing about which one matched or how far.
		if hmac.Equal(sig, want) {
			matched = true
		}
	}
	if !matched {
		return ErrNoMatch
	}
	if age := now.Sub(time.Unix(sec, 0)); age > tolerance || age < -tolerance {
		return fmt.Errorf("%w: signed %s ago", ErrTimestamp, age.Round(time.Second))
	}
	return nil
}
