package marketdata

import (
	"sort"
	"sync"
	"time"
)

// Currency is a currency as marketstack describes it: ISO 4217 code, the
// symbol used in English text, the symbol used in its own locale, and its
// English name.
type Currency struct {
	Code         string
	Symbol       string
	SymbolNative string
	Name         string
}

// Timezone is an IANA time zone with its standard and daylight-saving
// abbreviations (the same when the zone keeps no daylight-saving time).
type Timezone struct {
	Name    string
	Abbr    string
	AbbrDST string
}

// currencies are the currencies of the world's main exchanges, by code.
// A code outside the table is described by the code alone (CurrencyOf).
var currencies = []Currency{
	{"AED", "AED", "د.إ.\u200f", "United Arab Emirates Dirham"},
	{"AUD", "AU$", "$", "Australian Dollar"},
	{"BRL", "R$", "R$", "Brazilian Real"},
	{"CAD", "CA$", "$", "Canadian Dollar"},
	{"CHF", "CHF", "CHF", "Swiss Franc"},
	{"CNY", "CN¥", "CN¥", "Chinese Yuan"},
	{"DKK", "Dkr", "kr", "Danish Krone"},
	{"EUR", "€", "€", "Euro"},
	{"GBP", "£", "£", "British Pound Sterling"},
	{"HKD", "HK$", "$", "Hong Kong Dollar"},
	{"INR", "Rs", "₹", "Indian Rupee"},
	{"JPY", "¥", "￥", "Japanese Yen"},
	{"KRW", "₩", "₩", "South Korean Won"},
	{"MXN", "MX$", "$", "Mexican Peso"},
	{"NOK", "Nkr", "kr", "Norwegian Krone"},
	{"SEK", "Skr", "kr", "Swedish Krona"},
	{"SGD", "S$", "$", "Singapore Dollar"},
	{"USD", "$", "$", "US Dollar"},
	{"ZAR", "R", "R", "South African Rand"},
}

// timezoneNames are the time zones of the world's main exchanges.
var timezoneNames = []string{
	"Africa/Johannesburg", "America/Chicago", "America/Mexico_City", "America/New_York",
	"America/Sao_Paulo", "America/Toronto", "Asia/Dubai", "Asia/Hong_Kong", "Asia/Kolkata",
	"Asia/Seoul", "Asia/Shanghai", "Asia/Singapore", "Asia/Tokyo", "Australia/Sydney",
	"Europe/Amsterdam", "Europe/Berlin", "Europe/Copenhagen", "Europe/London", "Europe/Madrid",
	"Europe/Oslo", "Europe/Paris", "Europe/Stockholm", "Europe/Zurich",
}

// Currencies returns the known currencies ordered by code.
func Currencies() []Currency { return currencies }

// CurrencyOf describes the currency with the given code; an unknown code
// is its own symbol and name, so an exchange never answers without one.
func CurrencyOf(code string) Currency {
	i := sort.Search(len(currencies), func(i int) bool { return currencies[i].Code >= code })
	if i < len(currencies) && currencies[i].Code == code {
		return currencies[i]
	}
	return Currency{Code: code, Symbol: code, SymbolNative: code, Name: code}
}

var timezones = sync.OnceValue(func() []Timezone {
	out := make([]Timezone, len(timezoneNames))
	for i, name := range timezoneNames {
		out[i] = TimezoneOf(name)
	}
	return out
})

// Timezones returns the time zones of the main exchanges ordered by name.
func Timezones() []Timezone { return timezones() }

// TimezoneOf describes an IANA zone with its abbreviations as the time zone
// database gives them in 2025, so answers do not change with the calendar;
// a zone the database does not know has empty abbreviations.
func TimezoneOf(name string) Timezone {
	tz := Timezone{Name: name}
	loc, err := time.LoadLocation(name)
	if err != nil || name == "" {
		return tz
	}
	for _, month := range []time.Month{time.January, time.July} {
		t := time.Date(2025, month, 1, 12, 0, 0, 0, loc)
		abbr, _ := t.Zone()
		if t.IsDST() {
			tz.AbbrDST = abbr
		} else {
			tz.Abbr = abbr
		}
	}
	if tz.Abbr == "" { // a zone on daylight-saving time all year
		tz.Abbr = tz.AbbrDST
	}
	if tz.AbbrDST == "" {
		tz.AbbrDST = tz.Abbr
	}
	return tz
}

// micAliases maps ISO 10383 MICs to the codes marketstack uses instead.
// Requests may name either; answers carry marketstack's.
var micAliases = map[string]string{
	"XETR": "XETRA",
}
