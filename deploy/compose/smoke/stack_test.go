package smoke

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// stack is one compose project of deploy/compose/compose.yaml.
type stack struct {
	t *testing.T
	// compose is the compose command with the project's file.
	compose []string
	// env is the environment every compose command gets.
	env []string
	// prefix is the network's first three octets; prefix.1 is the Docker
	// host, prefix.10 the gateway, prefix.11 notes-svc-1.
	prefix string
	// gatewayImage also runs the direct call to a replica (it has curl).
	gatewayImage string
	// gateway is the gateway's base URL on the host, and client an HTTP
	// client trusting the certificate the gateway made at start, and only
	// that one.
	gateway string
	client  *http.Client
}

// envOr returns the variable's value, or def when it is unset or empty.
func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// envInt returns the variable as a positive integer, or def.
func envInt(t *testing.T, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		t.Fatalf("%s=%q: want a positive integer", name, v)
	}
	return n
}

// composeCommand is `docker compose` (v2) when it answers, else
// `docker-compose` (v1).
func composeCommand(t *testing.T) []string {
	if exec.Command("docker", "compose", "version").Run() == nil {
		return []string{"docker", "compose"}
	}
	if _, err := exec.LookPath("docker-compose"); err == nil {
		return []string{"docker-compose"}
	}
	t.Fatal("neither 'docker compose' nor 'docker-compose' is installed")
	return nil
}

// freePrefix is a 172.30.x /24 that no Docker network uses, so parallel
// stacks do not clash.
func freePrefix(t *testing.T) string {
	ids, err := exec.Command("docker", "network", "ls", "-q").Output()
	if err != nil {
		t.Fatalf("docker network ls: %v", err)
	}
	args := append([]string{"network", "inspect", "--format", "{{range .IPAM.Config}}{{.Subnet}} {{end}}"}, strings.Fields(string(ids))...)
	out, err := exec.Command("docker", args...).Output()
	if err != nil {
		t.Fatalf("docker network inspect: %v", err)
	}
	used := strings.Fields(string(out))
	for range 50 {
		candidate := fmt.Sprintf("172.30.%d", rand.IntN(256))
		free := true
		for _, s := range used {
			if strings.HasPrefix(s, candidate+".") || s == "172.30.0.0/16" || s == "172.16.0.0/12" {
				free = false
			}
		}
		if free {
			return candidate
		}
	}
	t.Fatal("no free 172.30.x.0/24 for the stack; set TICKERDESK_NET_PREFIX")
	return ""
}

// up starts the stack and registers its removal, then waits until the
// gateway routes /v1/notes to a replica. With ha, the stack runs with the
// ha profile and ha.compose.yaml laid over it: PostgreSQL is the Patroni
// cluster behind HAProxy. Under -short it skips the test: the stack needs
// Docker and the images.
func up(t *testing.T, ha bool) *stack {
	t.Helper()
	if testing.Short() {
		t.Skip("the compose stack needs Docker and the images; make compose-smoke runs it")
	}
	file, err := filepath.Abs(filepath.Join("..", "compose.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	load, err := filepath.Abs("load.compose.yaml")
	if err != nil {
		t.Fatal(err)
	}
	files := []string{"-f", file, "-f", load}
	if ha {
		overlay, err := filepath.Abs(filepath.Join("..", "ha.compose.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		// The profile on every command, so that ps, logs, exec and down
		// see the cluster's containers too.
		files = append(files, "-f", overlay, "--profile", "ha")
	}
	tag := envOr("TICKERDESK_IMAGE_TAG", "latest")
	// The stand-ins from `make test-images` unless official images are named.
	pg := envOr("TICKERDESK_POSTGRES_IMAGE", envOr("TICKERDESK_TEST_POSTGRES_IMAGE", "tickerdesk/test-postgres:15"))
	redis := envOr("TICKERDESK_REDIS_IMAGE", envOr("TICKERDESK_TEST_REDIS_IMAGE", "tickerdesk/test-redis:7"))
	gw := envOr("TICKERDESK_GATEWAY_IMAGE", "tickerdesk/gateway:nginx")
	patroni := envOr("TICKERDESK_TEST_PATRONI_IMAGE", "tickerdesk/test-patroni:15")
	images := []string{"tickerdesk/notes-svc:" + tag, "tickerdesk/marketdata-svc:" + tag, pg, redis, gw}
	if ha {
		images = append(images, patroni)
	}
	for _, image := range images {
		if err := exec.Command("docker", "image", "inspect", image).Run(); err != nil {
			t.Fatalf("image %s missing: run make images, make test-images and scripts/testimages.sh ha", image)
		}
	}
	s := &stack{t: t, compose: append(composeCommand(t), files...), prefix: os.Getenv("TICKERDESK_NET_PREFIX"), gatewayImage: gw}
	if s.prefix == "" {
		s.prefix = freePrefix(t)
	}
	name := "tickerdesk-smoke"
	if ha {
		name = "tickerdesk-smoke-ha"
	}
	project := envOr("COMPOSE_PROJECT_NAME", fmt.Sprintf("%s-%d", name, os.Getpid()))
	s.env = append(os.Environ(), "COMPOSE_PROJECT_NAME="+project, "TICKERDESK_IMAGE_TAG="+tag,
		"TICKERDESK_POSTGRES_IMAGE="+pg, "TICKERDESK_REDIS_IMAGE="+redis, "TICKERDESK_GATEWAY_IMAGE="+gw,
		"TICKERDESK_TEST_PATRONI_IMAGE="+patroni,
		"GATEWAY_PORT="+envOr("GATEWAY_PORT", "0"), "TICKERDESK_NET_PREFIX="+s.prefix,
		// The admin ports on any free loopback port, and a token file of
		// this run's own, made by the stack at up.
		"NOTES_ADMIN_PORT=0", "MARKETDATA_ADMIN_PORT=0", "TICKERDESK_ADMIN_DIR="+t.TempDir())

	start := time.Now()
	t.Logf("up (%s, %s, network %s.0/24)", project, s.compose[0], s.prefix)
	// Registered before up, so a half-started stack goes too.
	t.Cleanup(func() {
		if t.Failed() {
			ps, _ := s.run(context.Background(), "ps")
			logs, _ := s.run(context.Background(), "logs", "--no-color", "--tail=40")
			t.Logf("state at failure:\n%s\n%s", ps, logs)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if out, err := s.run(ctx, "down", "-v", "--remove-orphans", "--timeout", "10"); err != nil {
			t.Errorf("compose down: %v\n%s", err, out)
		}
		t.Logf("stack removed (%s)", project)
	})
	// up waits for the one-shot migrations and the demo load (depends_on
	// service_completed_successfully) and the replicas' health before it
	// starts the gateway, and fails when one of them fails.
	s.must("up", "-d")

	port := s.must("port", "gateway", "8443")
	port = strings.TrimSpace(strings.SplitN(port, "\n", 2)[0])
	port = port[strings.LastIndex(port, ":")+1:]
	if port == "" {
		t.Fatal("the gateway publishes no port")
	}
	s.gateway = "https://localhost:" + port
	// The certificate the gateway made at start: the only one trusted here.
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM([]byte(s.must("exec", "-T", "gateway", "cat", "/run/gateway/tls.crt"))) {
		t.Fatal("no certificate in the gateway")
	}
	s.client = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}, MaxIdleConnsPerHost: 16,
	}}
	deadline := start.Add(time.Duration(envInt(t, "SMOKE_TIMEOUT", 180)) * time.Second)
	for {
		status, _, _ := s.get(s.gateway+"/v1/notes", nil)
		if status == http.StatusUnauthorized {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the gateway did not route /v1/notes within %s (last status %d)", time.Until(deadline)+time.Since(start), status)
		}
		time.Sleep(time.Second)
	}
	t.Logf("ready after %s: gateway %s (TLS verified), the only published port", time.Since(start).Round(time.Second), s.gateway)
	return s
}

// run runs one compose command and returns its standard output; on error
// standard error is in the returned text too.
func (s *stack) run(ctx context.Context, args ...string) (string, error) {
	argv := append(append([]string{}, s.compose...), args...)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = s.env
	cmd.Stdin = nil
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String() + stderr.String(), fmt.Errorf("%s: %w", strings.Join(args, " "), err)
	}
	return stdout.String(), nil
}

// must is run that fails the test on error.
func (s *stack) must(args ...string) string {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	out, err := s.run(ctx, args...)
	if err != nil {
		s.t.Fatalf("compose %v\n%s", err, out)
	}
	return out
}

// container is the id of a service's container.
func (s *stack) container(service string) string {
	s.t.Helper()
	id := strings.TrimSpace(s.must("ps", "-q", service))
	if id == "" {
		s.t.Fatalf("no container for %s", service)
	}
	return id
}

// newKey creates a key with the service's own keys command and returns
// it (the last line it prints).
func (s *stack) newKey(service, binary string, args ...string) string {
	s.t.Helper()
	out := s.must(append([]string{"exec", "-T", service, binary, "keys", "create", "--account", "smoke"}, args...)...)
	lines := strings.Split(strings.TrimSpace(strings.ReplaceAll(out, "\r", "")), "\n")
	key := strings.TrimSpace(lines[len(lines)-1])
	if key == "" {
		s.t.Fatalf("%s keys create printed no key", service)
	}
	return key
}

// adminURL is the loopback address a service publishes its admin port
// on (compose port), failing the test unless it is bound to 127.0.0.1.
func (s *stack) adminURL(service, port string) string {
	s.t.Helper()
	out := strings.TrimSpace(strings.SplitN(s.must("port", service, port), "\n", 2)[0])
	if !strings.HasPrefix(out, "127.0.0.1:") {
		s.t.Fatalf("%s publishes its admin port %s on %q, want 127.0.0.1 only", service, port, out)
	}
	return "http://" + out
}

// adminToken is the token the stack generated into its admin token file.
func (s *stack) adminToken() string {
	s.t.Helper()
	line := strings.TrimSpace(s.must("run", "--rm", "-T", "admin-tokens", "cat /admin/tokens"))
	_, token, ok := strings.Cut(line, ":")
	if !ok || len(token) < 32 {
		s.t.Fatal("the admin token file holds no name:token line")
	}
	return token
}

// logLines are the JSON lines of the services' logs (compose's prefix cut
// off) that hold every one of the fragments.
func (s *stack) logLines(services []string, fragments ...string) []string {
	s.t.Helper()
	var found []string
	for _, svc := range services {
		for _, l := range strings.Split(s.must("logs", "--no-color", svc), "\n") {
			i := strings.IndexByte(l, '{')
			if i < 0 {
				continue
			}
			l = l[i:]
			ok := true
			for _, f := range fragments {
				ok = ok && strings.Contains(l, f)
			}
			if ok {
				found = append(found, l)
			}
		}
	}
	return found
}

// get sends a GET with the headers through the gateway's client and
// returns the status, the headers and the body.
func (s *stack) get(url string, header http.Header) (int, http.Header, string) {
	return s.do(http.MethodGet, url, header, nil)
}

// do sends a request through the gateway's client; a transport error is
// status 0 with the error as the body.
func (s *stack) do(method, url string, header http.Header, body []byte) (int, http.Header, string) {
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		s.t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return 0, nil, err.Error()
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	_, _ = b.ReadFrom(resp.Body)
	return resp.StatusCode, resp.Header, b.String()
}
