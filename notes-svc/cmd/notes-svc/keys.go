package main

import (
	"context"
	"fmt"
	"io"

	"github.com/tickerdesk/tickerdesk/notes-svc/internal/config"
	"github.com/tickerdesk/tickerdesk/notes-svc/internal/notesdb"
	"github.com/tickerdesk/tickerdesk/pkg/keyscli"
	"github.com/tickerdesk/tickerdesk/pkg/keystore"
)

// keysCommand is `notes-svc keys`, pkg/keyscli's command on the notes
// database: the same subcommands, flags and output as marketdata-svc's,
// without per-key limits (NOTES_RATE_LIMIT_PER_SECOND applies to every
// key).
func keysCommand(ctx context.Context, cfg config.Config, args []string, stdout io.Writer) error {
	return keyscli.Run(ctx, keyscli.Options{
		Command:  "notes-svc keys",
		Keys:     notesdb.KeyConfig(),
		CacheTTL: fmt.Sprintf("NOTES_KEY_CACHE_TTL (%s)", cfg.KeyCacheTTL),
		Open: func(context.Context) (*keystore.Store, func(), error) {
			store, db, err := openStore(cfg, nil)
			if err != nil {
				return nil, nil, err
			}
			return store.Store, func() { _ = db.Close() }, nil
		},
	}, args, stdout)
}
