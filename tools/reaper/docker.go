package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"time"
)

// docker is the few Docker Engine API calls pruning needs, over the
// engine's unix socket.
type docker struct {
	hc *http.Client
}

func newDocker(socket string) *docker {
	tr := &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", socket)
	}}
	return &docker{hc: &http.Client{Transport: tr, Timeout: 30 * time.Second}}
}

// prune removes, per filter, containers first (with their anonymous
// volumes), then networks, volumes and images, which containers may hold.
func (d *docker) prune(ctx context.Context, filters []map[string]map[string]bool) error {
	var errs []error
	for _, f := range filters {
		fj, err := json.Marshal(f)
		if err != nil {
			return fmt.Errorf("encode filter: %w", err)
		}
		q := url.Values{"filters": {string(fj)}}
		var containers []struct{ ID string }
		errs = append(errs, d.get(ctx, "/containers/json?all=1&"+q.Encode(), &containers))
		for _, c := range containers {
			errs = append(errs, d.remove(ctx, "/containers/"+c.ID+"?force=1&v=1"))
		}
		var networks []struct{ ID string }
		errs = append(errs, d.get(ctx, "/networks?"+q.Encode(), &networks))
		for _, n := range networks {
			errs = append(errs, d.remove(ctx, "/networks/"+n.ID))
		}
		var volumes struct{ Volumes []struct{ Name string } }
		errs = append(errs, d.get(ctx, "/volumes?"+q.Encode(), &volumes))
		for _, v := range volumes.Volumes {
			errs = append(errs, d.remove(ctx, "/volumes/"+url.PathEscape(v.Name)+"?force=1"))
		}
		var images []struct {
			ID string `json:"Id"`
		}
		errs = append(errs, d.get(ctx, "/images/json?"+q.Encode(), &images))
		for _, im := range images {
			errs = append(errs, d.remove(ctx, "/images/"+im.ID+"?force=1"))
		}
	}
	return errors.Join(errs...)
}

func (d *docker) get(ctx context.Context, path string, out any) error {
	res, err := d.do(ctx, http.MethodGet, path)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", path, res.Status)
	}
	if err := json.NewDecoder(res.Body).Decode(out); err != nil {
		return fmt.Errorf("GET %s: %w", path, err)
	}
	return nil
}

// remove deletes one resource; one already gone is no error.
func (d *docker) remove(ctx context.Context, path string) error {
	res, err := d.do(ctx, http.MethodDelete, path)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, res.Body)
	if res.StatusCode >= 300 && res.StatusCode != http.StatusNotFound {
		return fmt.Errorf("DELETE %s: %s", path, res.Status)
	}
	return nil
}

func (d *docker) do(ctx context.Context, method, path string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, "http://docker"+path, nil)
	if err != nil {
		return nil, fmt.Errorf("docker request: %w", err)
	}
	res, err := d.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("docker %s %s: %w", method, path, err)
	}
	return res, nil
}
