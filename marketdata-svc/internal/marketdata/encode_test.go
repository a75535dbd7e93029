package marketdata

import (
	"encoding/json"
	"testing"
)

// TestAppendJSONStringMatchesEncodingJSON holds the hand-written escaper to
// encoding/json byte for byte: every ASCII byte, the characters it escapes
// for HTML and JavaScript, multi-byte text and invalid UTF-8.
func TestAppendJSONStringMatchesEncodingJSON(t *testing.T) {
	inputs := []string{"", "plain", "Deutsche Börse", "東京証券取引所", "a\u2028b\u2029c", "bad \xff\xfe utf-8", "\xe2\x82", "<script>&amp;</script>"}
	for c := range 0x80 {
		inputs = append(inputs, string(rune(c)), "x"+string(rune(c))+"y")
	}
	for _, s := range inputs {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := AppendJSONString(nil, s); string(got) != string(want) {
			t.Errorf("AppendJSONString(%q) = %s, encoding/json writes %s", s, got, want)
		}
	}
}

// FuzzAppendJSONString extends the comparison to any input.
func FuzzAppendJSONString(f *testing.F) {
	f.Add("GOOG \b\f\x00 <&> \u2028 \xff")
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := AppendJSONString(nil, s); string(got) != string(want) {
			t.Errorf("AppendJSONString(%q) = %s, encoding/json writes %s", s, got, want)
		}
	})
}
