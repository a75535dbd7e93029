package config

import (
	"testing"

	"github.com/tickerdesk/tickerdesk/pkg/envconfig/envconfigtest"
)

// TestEverySettingBounded walks every duration and count of Config: each
// is set by a variable that refuses 1ns, 1µs, 100h and negative values
// with a message naming it. A new field without a bounded variable fails
// here, with no list to keep.
func TestEverySettingBounded(t *testing.T) {
	// The retentions start away from their default (720h), which is the
	// probe the check sets them to.
	envconfigtest.Check(t, Prefix, map[string]string{"NOTES_DATABASE_URL": "postgres://db/notes",
		"NOTES_EVENT_RETENTION": "240h", "NOTES_TRASH_RETENTION": "240h"}, Load)
}
