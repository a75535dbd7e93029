package main

// Placeholder replaced by the HTTP work.

import (
	"context"
	"errors"
	"log/slog"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/config"
)

func serve(ctx context.Context, cfg config.Config, log *slog.Logger, args []string) error {
	return errors.New("serve: not implemented yet")
}
