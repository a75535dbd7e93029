package auth

import (
	"hash/crc32"
	"strings"
	"testing"
)

func TestGenerateParseRoundTrip(t *testing.T) {
	key, hash, err := Generate(NotesPrefix)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(key, "tdn_") || len(key) != len("tdn_")+secretLen+checksumLen {
		t.Fatalf("key %q has the wrong shape", key)
	}
	got, err := Parse(NotesPrefix, key)
	if err != nil {
		t.Fatalf("Parse(own key) = %v", err)
	}
	if got != hash || got != HashKey(key) {
		t.Fatal("Parse returned a different hash than Generate")
	}
}

func TestGenerateIsRandom(t *testing.T) {
	seen := map[string]bool{}
	for range 100 {
		key, _, err := Generate(MarketDataPrefix)
		if err != nil {
			t.Fatal(err)
		}
		if seen[key] {
			t.Fatalf("duplicate key %q", key)
		}
		seen[key] = true
	}
}

func TestParseRejects(t *testing.T) {
	key, _, err := Generate(NotesPrefix)
	if err != nil {
		t.Fatal(err)
	}
	// Changing one secret character must break the checksum.
	flipped := []byte(key)
	if flipped[10] == 'a' {
		flipped[10] = 'b'
	} else {
		flipped[10] = 'a'
	}
	cases := map[string]string{
		"empty":           "",
		"other prefix":    "tdm_" + key[4:],
		"no separator":    "tdn" + key[4:],
		"truncated":       key[:len(key)-1],
		"extended":        key + "0",
		"typo":            string(flipped),
		"bad alphabet":    key[:10] + "-" + key[11:],
		"checksum zeroed": key[:len(key)-checksumLen] + "000000",
	}
	for name, k := range cases {
		if _, err := Parse(NotesPrefix, k); err != ErrMalformedKey {
			t.Errorf("%s: Parse = %v, want ErrMalformedKey", name, err)
		}
	}
}

func TestGenerateRejectsBadPrefix(t *testing.T) {
	for _, p := range []string{"", "TDN", "td_n", strings.Repeat("a", 17)} {
		if _, _, err := Generate(p); err == nil {
			t.Errorf("Generate(%q) succeeded", p)
		}
	}
}

func TestHintShowsNoSecret(t *testing.T) {
	key, _, _ := Generate(NotesPrefix)
	h := Hint(key)
	if !strings.HasPrefix(h, "tdn_") || !strings.HasSuffix(h, key[len(key)-4:]) || strings.Contains(h, key[4:20]) {
		t.Fatalf("Hint(%q) = %q", key, h)
	}
}

func FuzzParseKey(f *testing.F) {
	valid, _, _ := Generate(NotesPrefix)
	for _, s := range []string{valid, "", "tdn_", "tdn_" + strings.Repeat("0", 49), "tdm_" + valid[4:], valid + "\x00", "tdn_é" + valid[6:]} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, key string) {
		h, err := Parse(NotesPrefix, key)
		if err != nil {
			return
		}
		// Anything accepted must have the documented shape and its own hash.
		if len(key) != 4+secretLen+checksumLen || !strings.HasPrefix(key, "tdn_") {
			t.Fatalf("accepted key of wrong shape: %q", key)
		}
		if h != HashKey(key) {
			t.Fatal("hash mismatch")
		}
		if checksum(key[:len(key)-checksumLen]) != key[len(key)-checksumLen:] {
			t.Fatal("accepted key with wrong checksum")
		}
	})
}

// TestChecksumIsCRC32: the checksum's hand-rolled table loop computes
// hash/crc32's IEEE checksum, for every length a key body can have and more.
func TestChecksumIsCRC32(t *testing.T) {
	for n := range 80 {
		body := strings.Repeat("tdn_AZaz09", 8)[:n]
		want := crc32.ChecksumIEEE([]byte(body))
		sum := checksumOf(body)
		var got uint64
		for _, c := range sum {
			got = got*62 + uint64(strings.IndexByte(alphabet, c))
		}
		if got != uint64(want) {
			t.Fatalf("checksum of %q = %d, want crc32 %d", body, got, want)
		}
	}
}
