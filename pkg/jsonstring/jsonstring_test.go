package jsonstring

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"testing"
	"time"
)

// reflective is what Append and AppendNoHTMLEscape must match byte for
// byte.
func reflective(t testing.TB, s string, escapeHTML bool) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(escapeHTML)
	if err := enc.Encode(s); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// viaSlog is s as the value of a string attribute in slog's JSON handler,
// quotes included: what AppendSlog must match.
func viaSlog(t testing.TB, s string) []byte {
	var buf bytes.Buffer
	r := slog.NewRecord(time.Time{}, slog.LevelInfo, "", 0)
	r.AddAttrs(slog.String("k", s))
	if err := slog.NewJSONHandler(&buf, nil).Handle(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	line := buf.Bytes()
	start := bytes.Index(line, []byte(`"k":`)) + len(`"k":`)
	return line[start : len(line)-len("}\n")]
}

func check(t testing.TB, s string) {
	t.Helper()
	if got, want := Append(nil, s), reflective(t, s, true); !bytes.Equal(got, want) {
		t.Errorf("Append(%q)\n got %s\nwant %s", s, got, want)
	}
	if got, want := AppendNoHTMLEscape(nil, s), reflective(t, s, false); !bytes.Equal(got, want) {
		t.Errorf("AppendNoHTMLEscape(%q)\n got %s\nwant %s", s, got, want)
	}
	if got, want := AppendSlog(nil, s), viaSlog(t, s); !bytes.Equal(got, want) {
		t.Errorf("AppendSlog(%q)\n got %s\nwant %s", s, got, want)
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

// FuzzAppend checks the escapers against encoding/json and slog on any
// text, valid UTF-8 or not.
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
