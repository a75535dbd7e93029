package keyrate

import (
	"math"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"
)

// Header keys in canonical form. They are assigned to the header map
// directly: Header.Set canonicalises each key, which for keys such as
// "X-RateLimit-Limit" allocates a new string on every request.
const (
	hdrRateLimit       = "Ratelimit"
	hdrRateLimitPolicy = "Ratelimit-Policy"
	hdrLimit           = "X-Ratelimit-Limit"
	hdrRemaining       = "X-Ratelimit-Remaining"
	hdrReset           = "X-Ratelimit-Reset"
	hdrRetryAfter      = "Retry-After"
)

// State is what the headers of one answer report about its key's limits.
type State struct {
	// Rate is the key's requests per second; 0 leaves the per-second
	// limit out.
	Rate int
	// Remaining and ResetAfter are the Result of the request.
	Remaining  int
	ResetAfter time.Duration
	// Quota is the key's monthly quota; 0 leaves the month out (no quota,
	// or its state is unknown).
	Quota int64
	// Used is how many requests the month has counted, this one included.
	Used int64
	// QuotaResetAfter is the time to the start of the next month, and
	// QuotaWindow the length of this one.
	QuotaResetAfter time.Duration
	QuotaWindow     time.Duration
	// Refused adds Retry-After: RetryAfter, rounded up, at least 1 s.
	Refused    bool
	RetryAfter time.Duration
}

// Headers writes the limit headers: the IETF draft's RateLimit and
// RateLimit-Policy (structured fields, one item per policy: "second" and
// "month"), and the de-facto X-RateLimit-Limit/-Remaining/-Reset of the
// per-second limit (Reset in seconds from now); Retry-After on a refusal.
// The zero value is ready to use; it keeps the values that depend on the
// limits alone (see policyValues).
type Headers struct {
	last atomic.Pointer[policyValues]
}

// Write sets the headers of s on h.
func (w *Headers) Write(h http.Header, s State) {
	var stateBuf [96]byte
	state := stateBuf[:0]
	// The per-request values share one backing array: one allocation, not
	// one a header.
	var v *[3]string
	if s.Rate > 0 {
		reset := ceilSeconds(s.ResetAfter)
		state = append(state, `"second";r=`...)
		state = strconv.AppendInt(state, int64(max(s.Remaining, 0)), 10)
		state = append(state, ";t="...)
		state = strconv.AppendInt(state, reset, 10)
		v = &[3]string{strconv.Itoa(max(s.Remaining, 0)), strconv.FormatInt(reset, 10)}
		h[hdrRemaining] = v[0:1:1]
		h[hdrReset] = v[1:2:2]
	}
	withMonth := s.Quota > 0
	if withMonth {
		if len(state) > 0 {
			state = append(state, ", "...)
		}
		state = append(state, `"month";r=`...)
		state = strconv.AppendInt(state, max(s.Quota-s.Used, 0), 10)
		state = append(state, ";t="...)
		state = strconv.AppendInt(state, ceilSeconds(s.QuotaResetAfter), 10)
	}
	if s.Rate > 0 || withMonth {
		pv := w.policyOf(s)
		if s.Rate > 0 {
			h[hdrLimit] = pv.limit
		}
		h[hdrRateLimitPolicy] = pv.policy
		if v == nil {
			v = new([3]string)
		}
		v[2] = string(state)
		h[hdrRateLimit] = v[2:3:3]
	}
	if s.Refused {
		h[hdrRetryAfter] = []string{strconv.FormatInt(max(ceilSeconds(s.RetryAfter), 1), 10)}
	}
}

// policyValues are the header values that depend on a key's limits alone,
// not on its usage: RateLimit-Policy and X-RateLimit-Limit. They are built
// once per set of limits; the last set is kept, since most requests come
// under few plans, and a different set only costs building them again.
type policyValues struct {
	rate   int
	quota  int64 // 0 when the month is left out
	window int64 // the month's length in seconds, when it is in
	policy []string
	limit  []string
}

// policyOf returns the policy values of s.
func (w *Headers) policyOf(s State) *policyValues {
	rate, quota, window := max(s.Rate, 0), int64(0), int64(0)
	if s.Quota > 0 {
		quota, window = s.Quota, ceilSeconds(s.QuotaWindow)
	}
	if pv := w.last.Load(); pv != nil && pv.rate == rate && pv.quota == quota && pv.window == window {
		return pv
	}
	pv := &policyValues{rate: rate, quota: quota, window: window}
	var policy []byte
	if rate > 0 {
		policy = append(policy, `"second";q=`...)
		policy = strconv.AppendInt(policy, int64(rate), 10)
		policy = append(policy, ";w=1"...)
		pv.limit = []string{strconv.Itoa(rate)}
	}
	if quota > 0 {
		if len(policy) > 0 {
			policy = append(policy, ", "...)
		}
		policy = append(policy, `"month";q=`...)
		policy = strconv.AppendInt(policy, quota, 10)
		policy = append(policy, ";w="...)
		policy = strconv.AppendInt(policy, window, 10)
	}
	pv.policy = []string{string(policy)}
	w.last.Store(pv)
	return pv
}

// ceilSeconds rounds d up to whole seconds, so a client waiting that long
// is never early.
func ceilSeconds(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return int64(math.Ceil(d.Seconds()))
}
