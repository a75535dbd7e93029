package webhookdb

import (
	"encoding/json"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/tickerdesk/tickerdesk/notes-svc/internal/notes"
)

// Events appends events to the event log's table in the caller's
// transaction, as the delivery worker's EventLog. The event log of notesdb
// does the same for notes; either serves.
type Events struct{}

// AppendTx writes an event of eventType about object, as {"object": ...}.
func (Events) AppendTx(tx *gorm.DB, accountID, eventType string, object any) error {
	data, err := json.Marshal(map[string]any{"object": object})
	if err != nil {
		return fmt.Errorf("append event: %w", err)
	}
	id, err := notes.NewPrefixedID("evt_")
	if err != nil {
		return err
	}
	// seq and xid are the table's defaults.
	err = tx.Table("events").Create(map[string]any{
		"id": id, "account_id": accountID, "type": eventType, "created_at": time.Now().UTC(), "data": string(data),
	}).Error
	if err != nil {
		return fmt.Errorf("append event: %w", translate(err))
	}
	return nil
}
