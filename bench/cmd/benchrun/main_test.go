package main

import "testing"

// The bench's Redis database follows the stack's server, so that a second
// stack (another STACK_REDIS_PORT) never shares the first one's Redis.
func TestBenchRedisURLFollowsTheStack(t *testing.T) {
	for in, want := range map[string]string{
		"redis://127.0.0.1:56779/0": "redis://127.0.0.1:56779/15",
		"redis://127.0.0.1:56379":   "redis://127.0.0.1:56379/15",
		"not a url":                 "not a url",
	} {
		if got := benchRedisURL(in); got != want {
			t.Errorf("benchRedisURL(%q) = %q, want %q", in, got, want)
		}
	}
	cfg, err := loadConfig([]string{"/r"}, func(k string) string {
		return map[string]string{"MARKETDATA_REDIS_URL": "redis://127.0.0.1:56779/0"}[k]
	})
	if err != nil || cfg.RedisURL != "redis://127.0.0.1:56779/15" {
		t.Fatalf("config RedisURL %q, err %v", cfg.RedisURL, err)
	}
}
