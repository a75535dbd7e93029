# Tickerdesk: every target loops over the modules with GOWORK=off, because
# ./... does not span a workspace and each module must stand alone.

MODULES  := pkg notes-svc marketdata-svc
# Tool modules outside go.work: linted with the rest, tested by their targets.
TOOL_MODULES := bench resilience deploy/k8s/validate deploy/k8s/apply tools/fuzzrun clients tools/reaper testcontainers tools/docsbrowser deploy/monitoring/check deploy/compose/smoke
SERVICES := notes-svc marketdata-svc
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
BIN      := $(CURDIR)/bin
TOOLS    := $(CURDIR)/.bin
STATICCHECK_VERSION := v0.8.2
# promtool of Prometheus 3.x (the Go module's v0.3xx), built once into .bin/.
PROMTOOL_VERSION := v0.316.0
# FUZZTIME bounds each fuzz target in `make test` by execution count (a
# duration can race Go 1.26's fuzz deadline, golang/go#75804); `make fuzz
# FUZZTIME=5m` digs deeper, and tools/fuzzrun fails only on real findings.
FUZZTIME ?= 50000x

export GOWORK := off
export CGO_ENABLED ?= 0

.PHONY: help run up down test fuzz lint build tidy clean stack-up stack-down test-images images compose-smoke compose-ha compose-ha-down k8s-validate k8s-apply faults security bench bench-go clients clients-check tc-test docs-browser monitoring-check monitoring-generate gateway-routes routes duplicates backup-drill webhook-drill sync-demo

## help: list every target with its one-line description
help:
	@sed -nE 's/^## ([a-z][a-z0-9-]*): (.*)/  \1\t\2/p' $(MAKEFILE_LIST) | expand -t 22

## run: start PostgreSQL, Redis, both services and the demo data; print how to call them
run: build
	@scripts/run.sh

## test: the whole test suite (unit, PostgreSQL, Redis, end-to-end, bounded fuzzing)
test:
	@FUZZTIME=$(FUZZTIME) scripts/test.sh

## fuzz: only the fuzz targets, each for FUZZTIME (an execution count like 50000x, or a duration)
fuzz:
	@FUZZTIME=$(FUZZTIME) scripts/test.sh --fuzz-only

## build: static binaries of both services into bin/
build:
	@mkdir -p $(BIN)
	@for s in $(SERVICES); do \
	  echo "build $$s $(VERSION)"; \
	  (cd $$s && go build -trimpath -ldflags "-s -w -X main.version=$(VERSION)" -o $(BIN)/$$s ./cmd/$$s) || exit 1; \
	done

## lint: gofmt, go vet and staticcheck in every module
lint: $(TOOLS)/staticcheck
	@out=$$(gofmt -l $(MODULES) $(TOOL_MODULES)); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	@for m in $(MODULES) $(TOOL_MODULES); do echo "vet $$m"; (cd $$m && go vet ./...) || exit 1; done
	@for m in $(MODULES) $(TOOL_MODULES); do echo "staticcheck $$m"; (cd $$m && $(TOOLS)/staticcheck ./...) || exit 1; done

$(TOOLS)/staticcheck:
	@mkdir -p $(TOOLS)
	GOBIN=$(TOOLS) go install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

## tidy: go mod tidy in every module, the tool modules included
tidy:
	@for m in $(MODULES) $(TOOL_MODULES); do echo "tidy $$m"; (cd $$m && go mod tidy) || exit 1; done

## clients: regenerate the Go clients' gen.go from the services' OpenAPI documents (oapi-codegen, pinned in scripts/clients.sh)
clients:
	@scripts/clients.sh

## clients-check: regenerate the Go clients into a temporary directory; fail on any difference
clients-check:
	@scripts/clients.sh --check

## test-images: tickerdesk/test-postgres:15, tickerdesk/test-redis:7 and tickerdesk/gateway:nginx from Debian packages (each skipped when present)
test-images:
	@scripts/testimages.sh

## images: both service images (static binary FROM scratch), each run once with --version
images:
	@VERSION=$(VERSION) scripts/images.sh

## compose-smoke: the compose stack from local images, both APIs called through the TLS gateway with the Go clients (routing, request ids, client address, quota across replicas, SIGTERM under load), then the ha profile's failover (leader killed, note read and written again), always torn down (deploy/compose/smoke)
compose-smoke: test-images images
	@scripts/testimages.sh ha
	@cd deploy/compose/smoke && go test -count=1 -v -timeout 20m ./...

# The compose stack with the ha profile, from the local images (the
# stand-ins where no registry serves postgres:15 and redis:7).
COMPOSE_HA = TICKERDESK_POSTGRES_IMAGE=$${TICKERDESK_POSTGRES_IMAGE:-tickerdesk/test-postgres:15} \
	TICKERDESK_REDIS_IMAGE=$${TICKERDESK_REDIS_IMAGE:-tickerdesk/test-redis:7} \
	$$(docker compose version >/dev/null 2>&1 && echo docker compose || echo docker-compose) \
	-f deploy/compose/compose.yaml -f deploy/compose/ha.compose.yaml --profile ha

## compose-ha: the compose stack with the ha profile (PostgreSQL as three Patroni nodes, etcd and HAProxy; deploy/ha), detached; prints the cluster
compose-ha: test-images images
	@scripts/testimages.sh ha
	@$(COMPOSE_HA) up -d
	@$(COMPOSE_HA) exec -T pg1 patronictl -c /etc/patroni.yml list
	@echo "Gateway: https://localhost:$${GATEWAY_PORT:-8443}. Stop and remove everything, data included: make compose-ha-down"

## compose-ha-down: remove what make compose-ha started, volumes included
compose-ha-down:
	@$(COMPOSE_HA) down -v --remove-orphans

## tc-test: the testcontainers module (tdnotes, tdmarketdata) against the local images, with Ryuk off and on
tc-test: images test-images
	@scripts/tc-test.sh

## docs-browser: GET /docs of both services in headless Chromium (Debian's): every operation shown, one call tried; screenshots in .artifacts/
docs-browser:
	@scripts/docs-browser.sh

## monitoring-check: promtool check and test of deploy/monitoring's rules, every PromQL expression parsed, generated files current
monitoring-check: $(TOOLS)/promtool
	@PROMTOOL=$(TOOLS)/promtool scripts/monitoring-check.sh

$(TOOLS)/promtool:
	@mkdir -p $(TOOLS)
	GOBIN=$(TOOLS) go install github.com/prometheus/prometheus/cmd/promtool@$(PROMTOOL_VERSION)

## monitoring-generate: rewrite deploy/monitoring/metrics-*.txt and the PrometheusRule from the rules and dashboards
monitoring-generate:
	@cd deploy/monitoring/check && go test -count=1 -run TestGenerated ./... -update

## k8s-validate: kustomize v5.8.2 build of every overlay, strict decoding, semantic checks, gateway routes against the HTTPRoute
k8s-validate:
	@scripts/k8s-validate.sh

## k8s-apply: every overlay applied (server-side dry run, then for real) to kube-apiserver and etcd on loopback, objects and HPA/PDB/NetworkPolicy references checked in the API server, plus a self-test
k8s-apply:
	@scripts/k8s-apply.sh

## routes: rewrite deploy/routes/<service>.txt, each service's routes as its router lists them (public or internal)
routes:
	@for s in $(SERVICES); do (cd $$s && go test -count=1 -run '^TestRoutesFile$$' ./internal/httpapi/ -update) || exit 1; done

## gateway-routes: regenerate deploy/gateway/routes.conf (the compose gateway's nginx routes) from the Kubernetes HTTPRoute, checked against the route files
gateway-routes: routes
	@cd deploy/k8s/validate && UPDATE_GATEWAY_ROUTES=1 go test -count=1 -run '^TestGatewayRoutes$$' .

## bench: both services under load against the machine's ceilings; writes BENCHMARKS.md and bench/results.json
bench:
	@scripts/bench.sh

## bench-go: the Go benchmarks (testing.B, -benchmem) of every module
bench-go:
	@scripts/test.sh --bench

## faults: fault-injection, hostile-input and security suites on their own PostgreSQL and Redis; writes RELIABILITY.md
faults:
	@scripts/faults.sh

## webhook-drill: the webhooks step of make faults with its receiver down 10 minutes (CI runs 20 s): no event lost; writes .stack/faults/webhook-drill.md
webhook-drill:
	@FAULTS_ONLY=webhooks FAULTS_WEBHOOK_DOWN=10m FAULTS_STATIC=0 FAULTS_OUT=$${FAULTS_OUT:-.stack/faults/webhook-drill.md} scripts/faults.sh

## backup-drill: pgBackRest point-in-time restore on a fresh host from tickerdesk/test-patroni:15: exactly the notes acknowledged before T come back; reports RPO and RTO
backup-drill:
	@scripts/backup-drill.sh

## security: gosec (findings fixed or justified), staticcheck, govulncheck when its database answers
security:
	@scripts/security.sh

## v2-contract: marketstack's published v2 OpenAPI document held against the served one (MARKETSTACK_V2_OPENAPI names the file, which is marketstack's and not kept here)
v2-contract:
	@[ -n "$$MARKETSTACK_V2_OPENAPI" ] || { echo "v2-contract: set MARKETSTACK_V2_OPENAPI to marketstack's published v2 OpenAPI document (repository api-evangelist/marketstack, openapi/marketstack-v2-openapi.json)"; exit 2; }
	@scripts/testimages.sh >/dev/null && eval "$$(scripts/testimages.sh env)" && cd marketdata-svc && go test -tags contract -count=1 -run '^TestPublishedV2Contract$$' -v ./internal/httpapi/

## duplicates: the repeated-code budget (at most 40 pairs, 3 between the services) with the tool library's scanner
duplicates:
	@scripts/duplicates.sh

## stack-up: start only the local PostgreSQL and Redis of make run (scripts/stack.sh), detached
stack-up:
	@scripts/stack.sh up >/dev/null

## stack-down: stop the local PostgreSQL and Redis
stack-down:
	@scripts/stack.sh down

## clean: remove the built binaries
clean:
	rm -rf $(BIN)

## sync-demo: the DATA.md walk-through of marketdata-svc sync against the providers' fakes: a marketstack backfill, EODHD's daily bulk, a restated bar, Tiingo per symbol
sync-demo:
	@scripts/sync-demo.sh

## up: like run, but detached, for scripts and walk-throughs
up: build
	@scripts/run.sh --detach

## down: stop what make up started
down:
	@scripts/run.sh --stop
