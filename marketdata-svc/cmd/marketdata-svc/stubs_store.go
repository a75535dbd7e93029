package main

// Placeholders replaced by the data commands (owned by the store work).

import (
	"context"
	"errors"
	"io"
	"log/slog"

	"github.com/tickerdesk/tickerdesk/marketdata-svc/internal/config"
)

func generate(ctx context.Context, cfg config.Config, log *slog.Logger, args []string, stdout io.Writer) error {
	return errors.New("generate: not implemented yet")
}
