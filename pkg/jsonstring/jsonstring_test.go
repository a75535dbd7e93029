package jsonstring

import (
	"bytes"
	"encoding/json"
	"testing"
)

// reflective is what both functions must match byte for byte.
func reflective(t testing.TB, s string, escapeHTML bool) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(escapeHTML)
	if err := enc.Encode(s); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

func check(t testing.TB, s string) {
	t.Helper()
	if got, want := Append(nil, s), reflective(t, s, true); !bytes.Equal(got, want) {
		t.Errorf("Append(%q)\n got %s\nwant %s", s, got, want)
	}
	if got, want := AppendNoHTMLEscape(nil, s), reflective(t, s, false); !bytes.Equal(got, want) {
		t.Errorf("AppendNoHTMLEscape(%q)\n got %s\nwant %s", s, got, want)
	}
}

func TestMatchesEncodingJSON(t *testing.T) {
	for _, s := range []string{
		"", "plain text", "quote \" backslash \\ slash /", "<script>&amp;</script>",
		"ctl \x00\x01\x07\b\f\n\r\t\x1f\x7f", "é 中文 🎉 مرحبا", "line\u2028sep\u2029para",
		"bad \xff\xfe utf-8 \xe2\x82", "\xed\xa0\x80 surrogate", "end\\",
	} {
		check(t, s)
	}
	// Every single byte, alone and inside text.
	for c := 0; c < 256; c++ {
		check(t, string(rune(c)))
		check(t, "a"+string([]byte{byte(c)})+"b")
	}
}

// FuzzAppend checks both escapers against encoding/json on any text, valid
// UTF-8 or not.
func FuzzAppend(f *testing.F) {
	for _, seed := range []string{"", "a\"b\\c", "\x00\u2028\xff", "🎉<>&", "\b\f"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) { check(t, s) })
}

func BenchmarkAppend(b *testing.B) {
	s := "Alphabet Inc. - Class C Capital Stock <GOOG> & friends"
	buf := make([]byte, 0, 128)
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		buf = Append(buf[:0], s)
	}
}
