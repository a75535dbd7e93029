package webhook

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tickerdesk/tickerdesk/clients/notes/webhook"
	"github.com/tickerdesk/tickerdesk/pkg/fielderr"
)

func TestCipher(t *testing.T) {
	c, err := NewCipher(bytes.Repeat([]byte{7}, 32))
	if err != nil {
		t.Fatal(err)
	}
	sealed, err := c.Seal("whsec_abc", "we_1")
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(sealed, []byte("whsec_abc")) || sealed[0] != formatAESGCM {
		t.Fatalf("sealed secret shows the plaintext or no format: %x", sealed)
	}
	if got, err := c.Open(sealed, "we_1"); err != nil || got != "whsec_abc" {
		t.Errorf("Open = %q, %v", got, err)
	}
	// Copied to another endpoint's row, or read under another key or with
	// no key, it does not open.
	if _, err := c.Open(sealed, "we_2"); err == nil {
		t.Error("opened under another endpoint id")
	}
	other, _ := NewCipher(bytes.Repeat([]byte{8}, 32))
	if _, err := other.Open(sealed, "we_1"); !errors.Is(err, ErrNoSecretKey) {
		t.Errorf("another key: %v", err)
	}
	var none *Cipher
	if _, err := none.Open(sealed, "we_1"); !errors.Is(err, ErrNoSecretKey) {
		t.Errorf("no key: %v", err)
	}
	// Without a key secrets are stored as they are, and still open once a
	// key is configured.
	plain, _ := none.Seal("whsec_plain", "we_1")
	if got, err := c.Open(plain, "we_1"); err != nil || got != "whsec_plain" {
		t.Errorf("plain secret under a key: %q, %v", got, err)
	}
	for _, k := range []string{"short", "c2hvcnQ=", "!!!"} {
		if _, err := ParseKey(k); err == nil {
			t.Errorf("ParseKey(%q) accepted", k)
		}
	}
	if c, err := ParseKey(""); c != nil || err != nil {
		t.Errorf("ParseKey(\"\") = %v, %v", c, err)
	}
}

func TestSignatureVerifies(t *testing.T) {
	s1, _ := NewSecret()
	s2, _ := NewSecret()
	if !strings.HasPrefix(s1, SecretPrefix) || len(s1) != len(SecretPrefix)+43 || s1 == s2 {
		t.Fatalf("secrets %q %q", s1, s2)
	}
	body := []byte(`{"id":"evt_1"}`)
	h := Signature(time.Now(), body, s1, s2)
	for _, s := range []string{s1, s2} {
		if err := webhook.Verify(s, h, body, time.Minute); err != nil {
			t.Errorf("Verify with %.12s: %v", s, err)
		}
	}
	if err := webhook.Verify(s1, h, []byte(`{"id":"evt_2"}`), time.Minute); !errors.Is(err, webhook.ErrNoMatch) {
		t.Errorf("another body: %v", err)
	}
	if err := webhook.Verify(s1, Signature(time.Now().Add(-time.Hour), body, s1), body, time.Minute); !errors.Is(err, webhook.ErrTimestamp) {
		t.Errorf("an hour-old signature: %v", err)
	}
}

func TestOpenSecretsDuringRotation(t *testing.T) {
	now := time.Now()
	cur, _ := (*Cipher)(nil).Seal("whsec_new", "we_1")
	prev, _ := (*Cipher)(nil).Seal("whsec_old", "we_1")
	until := now.Add(time.Hour)
	e := Endpoint{ID: "we_1", Secret: cur, PreviousSecret: prev, PreviousExpiresAt: &until}
	if got, _ := OpenSecrets(nil, e, now); len(got) != 2 || got[0] != "whsec_new" || got[1] != "whsec_old" {
		t.Errorf("within the overlap: %v", got)
	}
	if got, _ := OpenSecrets(nil, e, until); len(got) != 1 {
		t.Errorf("after the overlap: %v", got)
	}
}

type refuseAll struct{}

func (refuseAll) CheckURL(context.Context, string) error { return errors.New("is refused") }

func TestValidation(t *testing.T) {
	var verr fielderr.List
	got := checkTypes([]string{" note.created ", "note.created", "note.deleted", "nope"}, &verr)
	if len(got) != 2 || !verr.Has("types") {
		t.Errorf("types %v, errors %v", got, verr.Fields)
	}
	if got := checkTypes(nil, &fielderr.List{}); got == nil {
		t.Error("no types gave nil, which would be stored as null")
	}
	for id, want := range map[string]bool{"we_01ABC": true, "we_": false, "we_a-b": false, "note_01ABC": false, "we_" + strings.Repeat("a", 65): false} {
		if validID(id, EndpointIDPrefix) != want {
			t.Errorf("validID(%q) = %v", id, !want)
		}
	}
	svc := &Service{urls: refuseAll{}, now: time.Now}
	_, _, err := svc.Create(context.Background(), "acct", Draft{URL: "https://x", Types: []string{"nope"}})
	var l *fielderr.List
	if !errors.As(err, &l) || !l.Has("url") || !l.Has("types") {
		t.Errorf("Create with a refused URL and an unknown type: %v", err)
	}
}
