package ratelimit

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// MaxQuotaKeys bounds the key_id label of
// marketdata_ratelimit_quota_refused_timestamp_seconds per process. Key ids
// are not chosen by clients (only an issued key can be refused for its
// quota), but a replica that lives for months could still see every key of
// the database: past this many series, those not refused in the last
// quotaSeriesIdle are dropped, and when none can be, the refusal is
// recorded under key_id="other".
const MaxQuotaKeys = 1000

// OtherKey is the key_id of quota refusals past MaxQuotaKeys.
const OtherKey = "other"

// quotaSeriesIdle is how long a key's series stays after its last quota
// refusal when room is needed: longer than any alert window on it.
const quotaSeriesIdle = 24 * time.Hour

// quotaRefusals exports, per key that exhausted its monthly quota, when the
// last request was refused for it. A timestamp rather than a counter: a
// counter's series is born at the first refusal, so increase() never sees
// that first refusal, which is the event an alert wants. The label is the
// key's id (the key_id of the access log), never the key.
type quotaRefusals struct {
	gauge *prometheus.GaugeVec
	mu    sync.Mutex
	last  map[string]time.Time // key id -> last refusal, the series that exist
}

func newQuotaRefusals() *quotaRefusals {
	return &quotaRefusals{
		gauge: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "marketdata_ratelimit_quota_refused_timestamp_seconds",
			Help: "Unix time of the last request refused because the key's monthly quota was spent, by key id (at most 1000 keys per process, then key_id=\"other\").",
		}, []string{"key_id"}),
		last: map[string]time.Time{},
	}
}

// refused records a quota refusal of keyID at now.
func (q *quotaRefusals) refused(keyID string, now time.Time) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if _, ok := q.last[keyID]; !ok && len(q.last) >= MaxQuotaKeys {
		for k, t := range q.last {
			if now.Sub(t) > quotaSeriesIdle && k != OtherKey {
				delete(q.last, k)
				q.gauge.DeleteLabelValues(k)
			}
		}
		if len(q.last) >= MaxQuotaKeys {
			keyID = OtherKey
		}
	}
	q.last[keyID] = now
	q.gauge.WithLabelValues(keyID).Set(float64(now.UnixNano()) / 1e9)
}
