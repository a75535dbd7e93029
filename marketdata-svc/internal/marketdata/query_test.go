package marketdata

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseSymbols(t *testing.T) {
	cases := []struct {
		in   string
		want []string
		err  bool
	}{
		{"goog", []string{"GOOG"}, false},
		{" goog , GSPC.indx,GOOG,msft ", []string{"GOOG", "GSPC.INDX", "MSFT"}, false},
		{"brk-b,^gspc", []string{"BRK-B", "^GSPC"}, false},
		{"A,,B,", []string{"A", "B"}, false},
		{"", nil, true},
		{" , ", nil, true},
		{"GOOG;DROP", nil, true},
		{"<script>", nil, true},
		{strings.Repeat("A", MaxSymbolLen+1), nil, true},
		{"É", nil, true},
	}
	for _, c := range cases {
		got, err := ParseSymbols(c.in)
		if (err != nil) != c.err || !reflect.DeepEqual(got, c.want) {
			t.Errorf("ParseSymbols(%q) = %v, %v; want %v, err %v", c.in, got, err, c.want, c.err)
		}
	}
	var many []string
	for i := range MaxSymbols + 1 {
		many = append(many, "S"+strings.Repeat("X", i%5)+string(rune('A'+i%26))+string(rune('A'+i/26)))
	}
	if _, err := ParseSymbols(strings.Join(many[:MaxSymbols], ",")); err != nil {
		t.Errorf("%d symbols: %v", MaxSymbols, err)
	}
	if _, err := ParseSymbols(strings.Join(many, ",")); err == nil {
		t.Errorf("%d symbols accepted", MaxSymbols+1)
	}
}

func TestParseDate(t *testing.T) {
	want := time.Date(2008, 10, 14, 0, 0, 0, 0, time.UTC)
	for _, in := range []string{"2008-10-14", "2008-10-14T00:00:00+0000", "2008-10-14T23:59:59+00:00", "2008-10-14T10:00:00Z", "2008-10-14T10:00:00-0500", "2008-10-14T10:00", "2008-10-14T10:00:00.123Z", "2008-10-14 10:00", "2008-10-14 23:59:59"} {
		got, err := ParseDate(in)
		if err != nil || !got.Equal(want) {
			t.Errorf("ParseDate(%q) = %v, %v", in, got, err)
		}
	}
	for _, in := range []string{"2008-02-30", "2008-13-01", "20081014", "2008-10-14T25:00:00Z", "0000-01-01", "yesterday", "", "2008-10-14 junk", "2008-10-14 10", "2008-10-14 25:00"} {
		if _, err := ParseDate(in); err == nil {
			t.Errorf("ParseDate(%q) accepted", in)
		}
	}
}

// TestParseInstantSpaceForm holds marketstack v2's documented intraday
// form, "YYYY-MM-DD HH:MM" (and ":SS"), to the instant of its ISO 8601
// twin, so that both forms read the same bars and share a cache key.
func TestParseInstantSpaceForm(t *testing.T) {
	for _, tc := range []struct{ space, iso string }{
		{"2024-09-27 15:30", "2024-09-27T15:30:00Z"},
		{"2024-09-27 15:30:59", "2024-09-27T15:30:59Z"},
	} {
		got, day, err := ParseInstant(tc.space)
		want, _, _ := ParseInstant(tc.iso)
		if err != nil || !day.IsZero() || !got.Equal(want) {
			t.Errorf("ParseInstant(%q) = %v, %v, %v; want %v", tc.space, got, day, err, want)
			continue
		}
		a := IntradayQuery{Symbols: []string{"GOOG"}, From: got, Interval: 1, Limit: 100}
		b := a
		b.From = want
		if a.CanonicalKey() != b.CanonicalKey() {
			t.Errorf("%q and %q have different keys", tc.space, tc.iso)
		}
		b.From = want.Add(time.Minute)
		if a.CanonicalKey() == b.CanonicalKey() {
			t.Errorf("%q shares a key with a minute later", tc.space)
		}
	}
}

func FuzzParseSymbols(f *testing.F) {
	for _, s := range []string{"GOOG", "goog, msft ,GOOG", "GSPC.INDX,^GSPC,BRK-B", ",,,", "A\x00B", "\xff", strings.Repeat("A,", 150)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		syms, err := ParseSymbols(raw)
		if err != nil {
			return
		}
		if len(syms) == 0 || len(syms) > MaxSymbols {
			t.Fatalf("%d symbols", len(syms))
		}
		seen := map[string]bool{}
		for _, s := range syms {
			if again, err := NormaliseSymbol(s); err != nil || again != s {
				t.Fatalf("symbol %q not normal", s)
			}
			if seen[s] {
				t.Fatalf("duplicate %q", s)
			}
			seen[s] = true
		}
		// Normalising the echo changes nothing.
		again, err := ParseSymbols(strings.Join(syms, ","))
		if err != nil || !reflect.DeepEqual(again, syms) {
			t.Fatalf("not idempotent: %v -> %v, %v", syms, again, err)
		}
	})
}

func FuzzParseDate(f *testing.F) {
	for _, s := range []string{"2008-10-14", "2008-10-14T00:00:00+0000", "2008-10-14T10:00:00Z", "2008-02-30", "9999-12-31T23:59:59-2359", "0001-01-01"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		d, err := ParseDate(raw)
		if err != nil {
			return
		}
		if d.Location() != time.UTC || d.Hour() != 0 || d.Minute() != 0 || d.Second() != 0 || d.Nanosecond() != 0 {
			t.Fatalf("not a UTC midnight: %v", d)
		}
		again, err := ParseDate(FormatDate(d))
		if err != nil || !again.Equal(d) {
			t.Fatalf("round trip %v -> %v, %v", d, again, err)
		}
	})
}

// marketstack's exchange codes are answered; the ISO MICs it spells
// differently are accepted as aliases.
func TestParseMICAliases(t *testing.T) {
	for in, want := range map[string]string{"XETR": "XETRA", "xetr": "XETRA", "XETRA": "XETRA", "xnas": "XNAS", "INDX": "INDX"} {
		if got, err := ParseMIC(in); err != nil || got != want {
			t.Errorf("ParseMIC(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

func TestTimezoneAndCurrencyDescriptions(t *testing.T) {
	for name, want := range map[string]Timezone{
		"America/New_York": {"America/New_York", "EST", "EDT"},
		"Europe/London":    {"Europe/London", "GMT", "BST"},
		"Asia/Tokyo":       {"Asia/Tokyo", "JST", "JST"},
		"Australia/Sydney": {"Australia/Sydney", "AEST", "AEDT"},
		"Not/AZone":        {"Not/AZone", "", ""},
	} {
		if got := TimezoneOf(name); got != want {
			t.Errorf("TimezoneOf(%q) = %+v, want %+v", name, got, want)
		}
	}
	if got := CurrencyOf("EUR"); got.Symbol != "€" || got.Name != "Euro" {
		t.Errorf("EUR = %+v", got)
	}
	if got := CurrencyOf("XYZ"); got != (Currency{"XYZ", "XYZ", "XYZ", "XYZ"}) {
		t.Errorf("unknown currency = %+v", got)
	}
	list := Currencies()
	for i := 1; i < len(list); i++ {
		if list[i-1].Code >= list[i].Code {
			t.Fatalf("currencies not ordered by code at %s", list[i].Code)
		}
	}
}

// TestEveryEODQueryFieldChangesTheCacheKey: a field left out of
// CanonicalKey would let two different queries share a cached page. Each
// field of EODQuery, found by reflection so a new one cannot be missed, is
// changed alone and must change the key.
func TestEveryEODQueryFieldChangesTheCacheKey(t *testing.T) {
	base := EODQuery{Symbols: []string{"GOOG"}, Exchange: "XNAS", DateFrom: time.Date(2008, 1, 2, 0, 0, 0, 0, time.UTC),
		DateTo: time.Date(2008, 10, 14, 0, 0, 0, 0, time.UTC), Sort: SortDesc, Limit: 100, Offset: 0}
	typ := reflect.TypeOf(base)
	for i := range typ.NumField() {
		q := base
		q.Symbols = slices.Clone(base.Symbols)
		f := reflect.ValueOf(&q).Elem().Field(i)
		switch v := f.Addr().Interface().(type) {
		case *[]string:
			*v = append(*v, "MSFT")
		case *string:
			*v += "X"
		case *time.Time:
			*v = v.AddDate(0, 0, 1)
		case *bool:
			*v = !*v
		case *SortOrder:
			*v = SortAsc
		case *int:
			*v++
		default:
			t.Fatalf("field %s of type %s: teach this test how to change it", typ.Field(i).Name, f.Type())
		}
		if q.CanonicalKey() == base.CanonicalKey() || q.CacheKey() == base.CacheKey() {
			t.Errorf("changing %s leaves the cache key as it was", typ.Field(i).Name)
		}
	}
}
