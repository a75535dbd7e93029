package etag

import "testing"

func TestNoneMatch(t *testing.T) {
	const tag = `"abc"`
	for _, c := range []struct {
		values []string
		want   bool
	}{
		{nil, false},
		{[]string{`"abc"`}, true},
		{[]string{`W/"abc"`}, true},
		{[]string{`*`}, true},
		{[]string{`"x", "abc"`}, true},
		{[]string{`"x"`, `"abc"`}, true}, // the list split over two lines
		{[]string{`"x",W/"abc" `}, true},
		{[]string{`"abcd"`}, false},
		{[]string{`abc`}, false},
		{[]string{`""`}, false},
		{[]string{``}, false},
	} {
		if got := NoneMatch(c.values, tag); got != c.want {
			t.Errorf("NoneMatch(%q) = %v, want %v", c.values, got, c.want)
		}
	}
}
