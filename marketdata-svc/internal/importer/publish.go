package importer

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// DataVersionKey is the Redis key holding the latest data version; caches
// read it with their entries so that an import invalidates them at once.
const DataVersionKey = "marketdata:data_version"

// setIfGreater never moves the version backwards, so two importers that
// finish out of order leave the newest version in place.
var setIfGreater = redis.NewScript(`
local cur = tonumber(redis.call('GET', KEYS[1]) or '0')
local v = tonumber(ARGV[1])
if v > cur then
  redis.call('SET', KEYS[1], ARGV[1])
  return v
end
return cur`)

// PublishVersion stores version in Redis under DataVersionKey unless a
// newer one is there, and returns the version Redis holds afterwards.
func PublishVersion(ctx context.Context, redisURL string, version int64) (int64, error) {
	opts, err := redis.ParseURL(redisURL)
	if err != nil {
		return 0, fmt.Errorf("publish data version: invalid redis url")
	}
	c := redis.NewClient(opts)
	defer c.Close()
	v, err := setIfGreater.Run(ctx, c, []string{DataVersionKey}, version).Int64()
	if err != nil {
		return 0, fmt.Errorf("publish data version: %w", err)
	}
	return v, nil
}
