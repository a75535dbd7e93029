package webhook

import (
	"bytes"
	"errors"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"
)

func TestParseEvent(t *testing.T) {
	ev, err := ParseEvent([]byte(`{"id":"evt_1","type":"note.created","created_at":"2026-01-02T03:04:05Z","data":{"object":{"id":"note_1","title":"Hi"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if ev.ID != "evt_1" || ev.Type != "note.created" || !ev.CreatedAt.Equal(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)) || ev.ObjectID() != "note_1" {
		t.Fatalf("parsed %+v, object id %q", ev, ev.ObjectID())
	}
	for _, body := range []string{``, `[]`, `{"type":"note.created"}`, `{"id":"evt_1"}`, `{"id":"evt_1","type":"note.created","created_at":"yesterday"}`} {
		if _, err := ParseEvent([]byte(body)); !errors.Is(err, ErrNotAnEvent) {
			t.Errorf("ParseEvent(%q) = %v, want ErrNotAnEvent", body, err)
		}
	}
	if id := (Event{}).ObjectID(); id != "" {
		t.Errorf("ObjectID of no object = %q", id)
	}
}

func TestConstructEventVerifiesFirst(t *testing.T) {
	body := []byte(`{"id":"evt_1","type":"note.deleted","created_at":"2026-01-02T03:04:05Z","data":{"object":{"id":"note_9"}}}`)
	now := time.Now()
	header := func(secret string) string {
		return "t=" + strconv.FormatInt(now.Unix(), 10) + ",v1=" + sign(secret, now, body)
	}
	ev, err := ConstructEvent(body, header("whsec_a"), "whsec_a", 0)
	if err != nil || ev.ObjectID() != "note_9" {
		t.Fatalf("signed event: %+v, %v", ev, err)
	}
	if _, err := ConstructEvent(body, header("whsec_b"), "whsec_a", 0); !errors.Is(err, ErrNoMatch) {
		t.Fatalf("event signed with another secret: %v, want ErrNoMatch", err)
	}
	r := httptest.NewRequest("POST", "/hook", bytes.NewReader(body))
	r.Header.Set(SignatureHeader, header("whsec_a"))
	if ev, err := ReadEvent(r, "whsec_a", 0); err != nil || ev.ID != "evt_1" {
		t.Fatalf("ReadEvent: %+v, %v", ev, err)
	}
	r = httptest.NewRequest("POST", "/hook", bytes.NewReader(body))
	if _, err := ReadEvent(r, "whsec_a", 0); !errors.Is(err, ErrMissingHeader) {
		t.Fatalf("ReadEvent without a signature: %v, want ErrMissingHeader", err)
	}
}
