package ratelimit

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// foldScript adds an old-layout counter to its new name and deletes it, in
// one step, so instances upgrading at once neither lose nor double a count.
// KEYS: old key, new key.
var foldScript = redis.NewScript(`
local old = redis.call('GET', KEYS[1])
if not old then return 0 end
redis.call('INCRBY', KEYS[2], old)
redis.call('DEL', KEYS[1])
return 1
`)

// UpgradeUsageKeys moves usage counters from the layout without hash tags
// ("usage:<keyID>:<YYYY-MM>") to usageKey's, adding to any count already
// made under the new name, so that the upgrade resets no quota; counters
// of past months are deleted, as the first count of a month would. Only a
// single server can hold the old layout (a Cluster refused its scripts,
// whose keys span slots), hence the *redis.Client. It returns how many
// counters it moved.
func UpgradeUsageKeys(ctx context.Context, rdb *redis.Client, now time.Time) (int, error) {
	month, _, _ := monthWindow(now)
	moved := 0
	iter := rdb.Scan(ctx, 0, "usage:*", 1000).Iterator()
	for iter.Next(ctx) {
		old := iter.Val()
		rest := strings.TrimPrefix(old, "usage:")
		i := strings.LastIndexByte(rest, ':')
		if strings.HasPrefix(rest, "{") || i <= 0 {
			continue
		}
		if rest[i+1:] != month {
			if err := rdb.Del(ctx, old).Err(); err != nil {
				return moved, fmt.Errorf("upgrade usage keys: %w", err)
			}
			continue
		}
		n, err := foldScript.Run(ctx, rdb, []string{old, usageKey(rest[:i], month)}).Int()
		if err != nil {
			return moved, fmt.Errorf("upgrade usage keys: %w", err)
		}
		moved += n
	}
	if err := iter.Err(); err != nil {
		return moved, fmt.Errorf("upgrade usage keys: %w", err)
	}
	return moved, nil
}
