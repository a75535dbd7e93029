package auth

import (
	"context"
	"testing"
)

// BenchmarkVerifyCached is the per-request cost of authentication once the
// key is in the verified-key cache: checksum, SHA-256 and a map lookup.
func BenchmarkVerifyCached(b *testing.B) {
	store := &fakeStore{}
	key, h, err := Generate(MarketDataPrefix)
	if err != nil {
		b.Fatal(err)
	}
	store.keys = map[Hash]Principal{h: {AccountID: "acc", KeyID: "k"}}
	a := NewAuthenticator(Options{Prefix: MarketDataPrefix, Store: store})
	ctx := context.Background()
	if _, err := a.Verify(ctx, key); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := a.Verify(ctx, key); err != nil {
			b.Fatal(err)
		}
	}
	if store.calls != 1 {
		b.Fatalf("store calls = %d, want 1", store.calls)
	}
}

// BenchmarkParse is the cost of rejecting a mistyped key before any lookup.
func BenchmarkParse(b *testing.B) {
	key, _, _ := Generate(NotesPrefix)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(NotesPrefix, key); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRedactQuery(b *testing.B) {
	const raw = "symbols=AAPL,MSFT&date_from=2020-01-01&limit=100&access_key=tdm_0123456789abcdefghijklmnopqrstuvwxyzABCDEFGxyz123"
	b.ReportAllocs()
	for b.Loop() {
		RedactQuery(raw)
	}
}
