// Package smoke is the compose smoke test (make compose-smoke): it brings
// the whole stack of deploy/compose/compose.yaml up from locally built
// images, calls both APIs through the gateway only (TLS, its one published
// port) with the generated Go clients, and always tears everything down
// again (containers, network, volume). Besides the calls themselves it
// shows:
//
//   - routing: every exact path of the gateway's routes reaches its
//     service, paths the HTTPRoute leaves out (/healthz) stay internal, and
//     a body over the gateway's limit gets 413 from the gateway;
//   - X-Request-Id: the caller's id is passed through and echoed, or one
//     is made, and the service logs the same id;
//   - client address: the address a service logs (and throttles on) is the
//     one the gateway saw, even with a forged X-Forwarded-For; and a forged
//     X-Forwarded-For sent to a replica directly, not via the gateway, is
//     not believed;
//   - admin API: /admin/v1/accounts through the gateway is a 404, and
//     each service's admin port, published on 127.0.0.1 only, answers 401
//     without a token and 201 with the token the stack generated;
//   - quota: a key with a monthly quota of SMOKE_QUOTA gets exactly that
//     many answers across the two marketdata replicas, then 429
//     usage_limit_reached;
//   - SIGTERM: one notes replica is stopped with SIGTERM under load (8
//     workers of the notes client, no retries); no request is lost (every
//     answer 2xx, no transport error). load.compose.yaml, laid over the
//     stack, lifts the per-key rate limit that would refuse most of one
//     key's load.
//
// TestComposeHA then brings the stack up with the ha profile
// (../ha.compose.yaml laid over it: PostgreSQL as three Patroni nodes
// behind HAProxy, configured by deploy/ha) and shows a failover: a leader
// and a synchronous standby; every session of both services on the
// primary comes from HAProxy; a note written, the leader's container
// killed, a new leader, the note read back and a new write accepted
// through the gateway; the old leader, started again, back as a standby.
//
// The tests need Docker with compose (`docker compose` or
// `docker-compose`) and the images tickerdesk/notes-svc and
// tickerdesk/marketdata-svc (make images), tickerdesk/test-postgres:15,
// tickerdesk/test-redis:7 and tickerdesk/gateway:nginx (make
// test-images), and tickerdesk/test-patroni:15 (scripts/testimages.sh
// ha); they skip under -short. The environment tunes them:
//
//	TICKERDESK_IMAGE_TAG       service image tag (default latest)
//	TICKERDESK_POSTGRES_IMAGE, TICKERDESK_REDIS_IMAGE, TICKERDESK_GATEWAY_IMAGE
//	                           other images than the local stand-ins
//	GATEWAY_PORT               host port of the gateway (default 0: any free port)
//	TICKERDESK_NET_PREFIX      the network's first three octets (default: a free 172.30.x)
//	SMOKE_QUOTA                the monthly quota of the quota check (default 5)
//	SMOKE_LOAD_SECONDS         length of the SIGTERM load (default 8)
//	SMOKE_TIMEOUT              seconds to wait for readiness (default 180)
//	SMOKE_REPORT               write the measured figures to this file (key=value)
//	TICKERDESK_TEST_PATRONI_IMAGE
//	                           the ha profile's image (default tickerdesk/test-patroni:15)
//	SMOKE_HA_TIMEOUT           seconds each wait of TestComposeHA may take (default 90)
//	SMOKE_HA_REPORT            write TestComposeHA's figures to this file (key=value)
package smoke
