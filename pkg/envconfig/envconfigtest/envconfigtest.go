// Package envconfigtest holds every numeric setting of a service's
// configuration to its bounds, for both services' config tests: each
// duration and count field of the Config must be listed, and each listed
// variable must refuse absurd values with a message naming it. A field
// added without a bound therefore fails its service's tests.
package envconfigtest

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

// Setting is one numeric variable of a configuration.
type Setting struct {
	// Var is the variable's name after the prefix, as in "CACHE_TTL".
	Var string
	// Field is the Config field it sets, as a dotted path through
	// embedded and nested structs ("Service.RequestTimeout").
	Field string
	// OK is a value within the bounds that the field must then hold.
	OK string
	// Off marks a duration whose 0 turns the behaviour off, so 0 is
	// accepted rather than refused.
	Off bool
}

// Check loads the configuration through load with base's variables (a
// configuration that loads) and one variable at a time changed: every
// time.Duration and int field of C must be listed in settings; each listed
// variable must set its field and refuse the absurd values (and 0, unless
// Off, for durations) with an error naming prefix+Var.
func Check[C any](t *testing.T, prefix string, base map[string]string, load func(getenv func(string) string) (C, error), settings []Setting) {
	t.Helper()
	// Far below or above anything a setting of either service is
	// designed for, or negative.
	absurdDurations := []string{"1ns", "1us", "100h", "-1s"}
	absurdCounts := []string{"-1", "99999999999"}
	listed := map[string]Setting{}
	for _, s := range settings {
		listed[s.Field] = s
	}
	for _, f := range numericFields(reflect.TypeFor[C](), "") {
		if _, ok := listed[f]; !ok {
			t.Errorf("field %s has no bounded variable in the table: read it with envconfig's DurationIn, DurationOrOff or IntIn, document its bounds, and list it", f)
		}
	}
	with := func(name, value string) func(string) string {
		return func(key string) string {
			if key == prefix+name {
				return value
			}
			return base[key]
		}
	}
	if _, err := load(with("", "")); err != nil {
		t.Fatalf("base configuration: %v", err)
	}
	for _, s := range settings {
		c, err := load(with(s.Var, s.OK))
		if err != nil {
			t.Errorf("%s%s=%s refused: %v", prefix, s.Var, s.OK, err)
			continue
		}
		field, ok := fieldByPath(reflect.ValueOf(c), s.Field)
		if !ok {
			t.Errorf("no field %s for %s%s", s.Field, prefix, s.Var)
			continue
		}
		absurd := absurdCounts
		if field.Type() == reflect.TypeFor[time.Duration]() {
			absurd = absurdDurations
			if !s.Off {
				absurd = append([]string{"0"}, absurd...)
			}
			want, _ := time.ParseDuration(s.OK)
			if time.Duration(field.Int()) != want {
				t.Errorf("%s%s=%s set %s to %v", prefix, s.Var, s.OK, s.Field, field.Interface())
			}
		} else if got := fmt.Sprint(field.Interface()); got != s.OK {
			t.Errorf("%s%s=%s set %s to %s", prefix, s.Var, s.OK, s.Field, got)
		}
		for _, v := range absurd {
			_, err := load(with(s.Var, v))
			if err == nil || !strings.Contains(err.Error(), prefix+s.Var) {
				t.Errorf("%s%s=%s: want an error naming the variable, got %v", prefix, s.Var, v, err)
			}
		}
	}
}

// numericFields lists the dotted paths of t's time.Duration and int
// fields, through nested structs.
func numericFields(t reflect.Type, path string) []string {
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		name := path + f.Name
		switch {
		case f.Type == reflect.TypeFor[time.Duration]() || f.Type == reflect.TypeFor[int]():
			out = append(out, name)
		case f.Type.Kind() == reflect.Struct:
			out = append(out, numericFields(f.Type, name+".")...)
		}
	}
	return out
}

func fieldByPath(v reflect.Value, path string) (reflect.Value, bool) {
	for name := range strings.SplitSeq(path, ".") {
		if v.Kind() != reflect.Struct {
			return reflect.Value{}, false
		}
		if v = v.FieldByName(name); !v.IsValid() {
			return reflect.Value{}, false
		}
	}
	return v, true
}

// ServiceSettings are the numeric settings of envconfig.Service, which
// both services' Configs embed as Service.
func ServiceSettings() []Setting {
	return []Setting{
		{Var: "REQUEST_TIMEOUT", Field: "Service.RequestTimeout", OK: "3s"},
		{Var: "SHUTDOWN_DRAIN", Field: "Service.ShutdownDrain", OK: "2s", Off: true},
		{Var: "SHUTDOWN_TIMEOUT", Field: "Service.ShutdownTimeout", OK: "15s"},
		{Var: "KEY_CACHE_TTL", Field: "Service.KeyCacheTTL", OK: "10s", Off: true},
		{Var: "AUTH_FAILURE_LIMIT", Field: "Service.AuthFailureLimit", OK: "7"},
		{Var: "AUTH_FAILURE_WINDOW", Field: "Service.AuthFailureWindow", OK: "2m"},
	}
}
