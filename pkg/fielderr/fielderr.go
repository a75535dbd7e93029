// Package fielderr is the error of a request that fails validation: every
// invalid field or query parameter at once, each with its reason, in the
// order they were checked. pkg/pagination, the notes domain and
// marketdata's parameter parsing all report through it, so a handler adds
// pagination's failures to its own without converting them and each
// service's one error mapping reads one shape. How the list is written on
// the wire stays each API's own.
package fielderr

import "strings"

// Field is one invalid field, query parameter or header of a request.
type Field struct {
	// Name is the field's JSON name, or the parameter's or header's name.
	Name string
	// Key is a stable machine-readable reason where the API reports one
	// (marketdata's error context); empty otherwise.
	Key string
	// Message says what is wrong, for people.
	Message string
}

// List is every invalid field of a request. The zero value is an empty
// list, ready to use.
type List struct {
	Fields []Field
}

// Error joins the failures.
func (l *List) Error() string {
	parts := make([]string, len(l.Fields))
	for i, f := range l.Fields {
		parts[i] = f.Name + ": " + f.Message
	}
	return "invalid request: " + strings.Join(parts, "; ")
}

// Add records that the field name is invalid, with no Key.
func (l *List) Add(name, message string) {
	l.Fields = append(l.Fields, Field{Name: name, Message: message})
}

// Has reports whether the field name already failed.
func (l *List) Has(name string) bool {
	if l == nil {
		return false
	}
	for _, f := range l.Fields {
		if f.Name == name {
			return true
		}
	}
	return false
}

// Err returns l when it holds failures and nil otherwise, so a validation
// can collect into a List and return l.Err() whatever it found.
func (l *List) Err() error {
	if l == nil || len(l.Fields) == 0 {
		return nil
	}
	return l
}
