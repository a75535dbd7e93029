package stack

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/docker/go-connections/nat"
	"github.com/testcontainers/testcontainers-go"
)

// The service's admin API (pkg/adminapi) listens on a port of its own in
// the container, with a token file the stack writes there; keys are
// issued through it, as a signup or billing system issues them, never by
// parsing what a command prints.
const (
	adminPort      = "9090/tcp"
	adminTokenPath = "/admin-tokens"
	// adminTokenName is what the service's audit trail records as the
	// actor of the stack's changes.
	adminTokenName = "testcontainers"
)

// adminRequestTimeout bounds one admin call: each is one small statement.
const adminRequestTimeout = 30 * time.Second

// KeyOptions are the settings of a key issued through the admin API; the
// zero value is the service's default key (its default scopes, no expiry,
// no limit).
type KeyOptions struct {
	// Scopes of the key; none means the service's default.
	Scopes []string
	// ExpiresIn is the key's lifetime from now; zero means it never
	// expires.
	ExpiresIn time.Duration
	// RatePerSecond and MonthlyQuota are marketdata-svc's per-key limits;
	// zero means no limit.
	RatePerSecond int
	MonthlyQuota  int64
}

// newAdminToken is a fresh admin token and the token file holding it.
func newAdminToken() (token string, file testcontainers.ContainerFile, err error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", file, fmt.Errorf("admin token: %w", err)
	}
	token = hex.EncodeToString(b)
	file = testcontainers.ContainerFile{
		Reader:            strings.NewReader(adminTokenName + ":" + token + "\n"),
		ContainerFilePath: adminTokenPath,
		FileMode:          0o444,
	}
	return token, file, nil
}

// IssueKey issues a key for account through the service's admin API,
// creating the account the first time the stack names it, and returns the
// key's secret.
func (s *Stack) IssueKey(ctx context.Context, account string, o KeyOptions) (string, error) {
	id, err := s.accountID(ctx, account)
	if err != nil {
		return "", err
	}
	body := map[string]any{"name": "testcontainers"}
	if o.Scopes != nil {
		body["scopes"] = o.Scopes
	}
	if o.ExpiresIn > 0 {
		body["expires_at"] = time.Now().Add(o.ExpiresIn).UTC().Format(time.RFC3339)
	}
	if o.RatePerSecond > 0 {
		body["rate_per_second"] = o.RatePerSecond
	}
	if o.MonthlyQuota > 0 {
		body["monthly_quota"] = o.MonthlyQuota
	}
	var key struct {
		Secret string `json:"secret"`
	}
	if err := s.admin(ctx, "/admin/v1/accounts/"+id+"/keys", body, &key); err != nil {
		return "", fmt.Errorf("issue key: %w", err)
	}
	if key.Secret == "" {
		return "", errors.New("issue key: the answer holds no secret")
	}
	return key.Secret, nil
}

// accountID is the id of the account named name, created on first use.
// Accounts are found by the name the stack created them under: the admin
// API reads accounts by id only.
func (s *Stack) accountID(ctx context.Context, name string) (string, error) {
	s.mu.Lock()
	id, ok := s.accounts[name]
	s.mu.Unlock()
	if ok {
		return id, nil
	}
	var a struct {
		ID string `json:"id"`
	}
	if err := s.admin(ctx, "/admin/v1/accounts", map[string]any{"name": name}, &a); err != nil {
		return "", fmt.Errorf("create account %s: %w", name, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.accounts == nil {
		s.accounts = map[string]string{}
	}
	s.accounts[name] = a.ID
	return a.ID, nil
}

// admin POSTs body to path on the admin API and decodes its 201 answer
// into out. An error carries the problem's detail, never the request.
func (s *Stack) admin(ctx context.Context, path string, body, out any) error {
	base, err := s.Service.PortEndpoint(ctx, nat.Port(adminPort), "http")
	if err != nil {
		return fmt.Errorf("admin endpoint: %w", err)
	}
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, adminRequestTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+path, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+s.adminToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusCreated {
		var p struct {
			Title  string `json:"title"`
			Detail string `json:"detail"`
		}
		_ = json.Unmarshal(data, &p)
		return fmt.Errorf("admin API answered %d: %s %s", resp.StatusCode, p.Title, p.Detail)
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("admin API answer: %w", err)
	}
	return nil
}
