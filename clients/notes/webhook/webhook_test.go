package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strconv"
	"testing"
	"time"
)

func sign(secret string, t time.Time, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(ts + "."))
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

func TestVerify(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	body := []byte(`{"id":"evt_1","type":"note.created"}`)
	ts := "t=" + strconv.FormatInt(now.Unix(), 10)
	good := sign("whsec_new", now, body)
	old := sign("whsec_old", now, body)
	for _, tc := range []struct {
		name   string
		secret string
		header string
		body   []byte
		at     time.Time
		want   error
	}{
		{"valid", "whsec_new", ts + ",v1=" + good, body, now, nil},
		{"rotation, new secret", "whsec_new", ts + ",v1=" + good + ",v1=" + old, body, now, nil},
		{"rotation, old secret", "whsec_old", ts + ",v1=" + good + ",v1=" + old, body, now, nil},
		{"unknown scheme ignored", "whsec_new", ts + ",v0=abc,v1=" + good, body, now, nil},
		{"within tolerance", "whsec_new", ts + ",v1=" + good, body, now.Add(4 * time.Minute), nil},
		{"forged body", "whsec_new", ts + ",v1=" + good, []byte(`{"id":"evt_1","type":"note.deleted"}`), now, ErrNoMatch},
		{"wrong secret", "whsec_other", ts + ",v1=" + good, body, now, ErrNoMatch},
		{"forged timestamp", "whsec_new", "t=" + strconv.FormatInt(now.Unix()+600, 10) + ",v1=" + good, body, now.Add(10 * time.Minute), ErrNoMatch},
		{"replayed", "whsec_new", ts + ",v1=" + good, body, now.Add(6 * time.Minute), ErrTimestamp},
		{"from the future", "whsec_new", ts + ",v1=" + good, body, now.Add(-6 * time.Minute), ErrTimestamp},
		{"missing", "whsec_new", "", body, now, ErrMissingHeader},
		{"no v1", "whsec_new", ts, body, now, ErrMalformedHeader},
		{"no t", "whsec_new", "v1=" + good, body, now, ErrMalformedHeader},
		{"two t", "whsec_new", ts + "," + ts + ",v1=" + good, body, now, ErrMalformedHeader},
		{"bad hex", "whsec_new", ts + ",v1=zz", body, now, ErrMalformedHeader},
		{"short signature", "whsec_new", ts + ",v1=" + good[:10], body, now, ErrMalformedHeader},
		{"bad t", "whsec_new", "t=soon,v1=" + good, body, now, ErrMalformedHeader},
		{"no equals", "whsec_new", ts + ",v1", body, now, ErrMalformedHeader},
	} {
		err := verifyAt(tc.secret, tc.header, tc.body, 5*time.Minute, tc.at)
		if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
			t.Errorf("%s: Verify = %v, want %v", tc.name, err, tc.want)
		}
	}
}
