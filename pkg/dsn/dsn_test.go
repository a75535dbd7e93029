package dsn

import "testing"

func TestMask(t *testing.T) {
	for in, want := range map[string]string{
		"": "",
		"postgres://u:pw@h:5432/db?sslmode=disable": "postgres://u:xxxxx@h:5432/db?sslmode=disable",
		"postgres://u@h/db":                         "postgres://u@h/db",
		"postgres://h/db?password=pw&sslmode=1":     "postgres://h/db?password=xxxxx&sslmode=1",
		"redis://:secret@h:6379/0":                  "redis://:xxxxx@h:6379/0",
		"redis://h:6379":                            "redis://h:6379",
		"::not a url with secret":                   "(unparsable, hidden)",
	} {
		if got := Mask(in); got != want {
			t.Errorf("Mask(%q) = %q, want %q", in, got, want)
		}
	}
}
