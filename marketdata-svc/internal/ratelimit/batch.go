package ratelimit

import (
	"context"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// batcher sends the limit checks of concurrent requests to Redis together,
// as one pipeline: one write and one read on each side for a whole batch
// instead of per request, which is what a busy host pays most for. It adds
// no wait: a request that finds fewer than maxInFlight pipelines under way
// sends at once, with whatever else is queued; otherwise it joins the
// queue that the next pipeline takes. Each script call stays atomic in
// Redis, so batching changes no limit's outcome.
type batcher struct {
	rdb         redis.UniversalClient
	timeout     time.Duration
	maxInFlight int

	mu       sync.Mutex
	queue    []*limitCall
	inFlight int
}

type limitCall struct {
	keys []string
	args []any
	res  []any
	err  error
	done chan struct{}
}

// run executes limitScript for keys and args in the next pipeline and
// waits for its reply or ctx's end.
func (b *batcher) run(ctx context.Context, keys []string, args []any) ([]any, error) {
	c := &limitCall{keys: keys, args: args, done: make(chan struct{})}
	b.mu.Lock()
	b.queue = append(b.queue, c)
	lead := b.inFlight < b.maxInFlight
	if lead {
		b.inFlight++
	}
	b.mu.Unlock()
	if lead {
		b.flush()
	}
	select {
	case <-c.done:
		return c.res, c.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// flush sends the queued calls as one pipeline; if more calls queued
// meanwhile, another pipeline takes them, so none is left waiting.
func (b *batcher) flush() {
	b.mu.Lock()
	calls := b.queue
	b.queue = nil
	b.mu.Unlock()
	if len(calls) > 0 {
		b.exec(calls)
	}
	b.mu.Lock()
	if len(b.queue) > 0 {
		b.mu.Unlock()
		go b.flush()
		return
	}
	b.inFlight--
	b.mu.Unlock()
}

func (b *batcher) exec(calls []*limitCall) {
	ctx, cancel := context.WithTimeout(context.Background(), b.timeout)
	defer cancel()
	cmds := make([]*redis.Cmd, len(calls))
	_, _ = b.rdb.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		for i, c := range calls {
			cmds[i] = limitScript.EvalSha(ctx, pipe, c.keys, c.args...)
		}
		return nil
	})
	for i, c := range calls {
		c.res, c.err = cmds[i].Slice()
		if c.err != nil && redis.HasErrorPrefix(c.err, "NOSCRIPT") {
			// A fresh or flushed Redis: Run loads the script.
			c.res, c.err = limitScript.Run(ctx, b.rdb, c.keys, c.args...).Slice()
		}
		close(c.done)
	}
}
