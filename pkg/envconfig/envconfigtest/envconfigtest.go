// Package envconfigtest holds every numeric setting of a service's
// configuration to its bounds, for both services' config tests. It needs
// no list of the settings: it finds the variable behind each duration and
// count field of the Config by setting each variable the loader reads, in
// turn, to probe values; then each of those variables must refuse absurd
// values with a message naming it. A field added without a variable, or
// read without bounds, therefore fails its service's tests.
package envconfigtest

import (
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Check loads the configuration through load with base's variables (a
// configuration that loads), then with one variable at a time changed.
// Every time.Duration and int field of C (through nested structs) must be
// set by some variable under prefix that load reads; each such variable
// must refuse 1ns, 1µs, 100h and -1s (a duration) or -1 and 99999999999 (a
// count) with an error naming it.
func Check[C any](t *testing.T, prefix string, base map[string]string, load func(getenv func(string) string) (C, error)) {
	t.Helper()
	read := map[string]bool{}
	cfg, err := load(func(key string) string { read[key] = true; return base[key] })
	if err != nil {
		t.Fatalf("base configuration: %v", err)
	}
	with := func(name, value string) func(string) string {
		return func(key string) string {
			if key == name {
				return value
			}
			return base[key]
		}
	}
	fields := numericFields(reflect.TypeFor[C](), "")
	baseValue := map[string]int64{}
	for _, f := range fields {
		baseValue[f] = fieldByPath(reflect.ValueOf(cfg), f).Int()
	}
	// Values within the bounds of every setting of both services (720h for
	// retentions, whose floor is a week), tried
	// until one loads and lands, unchanged, in exactly the field it sets.
	probes := []string{"2s", "5s", "30s", "3m", "250ms", "50ms", "15m", "2h", "3", "7", "50", "5000", "100000", "720h"}
	// candidates are, for each variable, the fields the first probe that
	// loads lands in; a variable whose default others follow (a pool size
	// and its idle connections) lands in several, and is given the one no
	// other variable sets.
	candidates := map[string][]string{}
	var names []string
	for name := range read {
		if strings.HasPrefix(name, prefix) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	for _, name := range names {
		for _, probe := range probes {
			c, err := load(with(name, probe))
			if err != nil {
				continue
			}
			if fs := holding(reflect.ValueOf(c), fields, baseValue, probe); len(fs) > 0 {
				candidates[name] = fs
				break
			}
		}
	}
	setBy := map[string]string{}
	for progress := true; progress; {
		progress = false
		for _, name := range names {
			var open []string
			for _, f := range candidates[name] {
				if _, taken := setBy[f]; !taken {
					open = append(open, f)
				}
			}
			if len(open) == 1 {
				setBy[open[0]] = name
				delete(candidates, name)
				progress = true
			}
		}
	}
	for _, f := range fields {
		name, ok := setBy[f]
		if !ok {
			t.Errorf("field %s is set by no variable: read it with envconfig's DurationIn, DurationOrOff or IntIn", f)
			continue
		}
		absurd := []string{"-1", "99999999999"}
		if fieldByPath(reflect.ValueOf(cfg), f).Type() == reflect.TypeFor[time.Duration]() {
			absurd = []string{"1ns", "1us", "100h", "-1s"}
		}
		for _, v := range absurd {
			if _, err := load(with(name, v)); err == nil || !strings.Contains(err.Error(), name) {
				t.Errorf("%s=%s (field %s): %v; want an error naming the variable: read it with envconfig's DurationIn, DurationOrOff or IntIn and document its bounds", name, v, f, err)
			}
		}
	}
}

// holding returns the fields of fields that c holds probe in, changed
// from their base value.
func holding(c reflect.Value, fields []string, base map[string]int64, probe string) []string {
	d, derr := time.ParseDuration(probe)
	n, nerr := strconv.ParseInt(probe, 10, 64)
	var found []string
	for _, f := range fields {
		v := fieldByPath(c, f)
		got := v.Int()
		if got == base[f] {
			continue
		}
		isDuration := v.Type() == reflect.TypeFor[time.Duration]()
		if isDuration && derr == nil && got == int64(d) || !isDuration && nerr == nil && got == n {
			found = append(found, f)
		}
	}
	return found
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

func fieldByPath(v reflect.Value, path string) reflect.Value {
	for name := range strings.SplitSeq(path, ".") {
		v = v.FieldByName(name)
	}
	return v
}
