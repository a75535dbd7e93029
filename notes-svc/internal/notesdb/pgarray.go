package notesdb

import (
	"context"
	"database/sql/driver"
	"fmt"
	"reflect"
	"sync"

	"github.com/jackc/pgx/v5/pgtype"
	"gorm.io/gorm/schema"
)

// pgArray is a PostgreSQL array argument in a GORM statement. GORM
// expands a plain slice argument into a parameter list, so an array needs
// a driver.Valuer; its Value hands pgx the slice itself, which pgx's array
// codec encodes (pgx, under database/sql, takes any value its codecs
// know). A nil slice is the empty array, as the NOT NULL columns need.
type pgArray[T any] []T

// Value implements driver.Valuer.
func (a pgArray[T]) Value() (driver.Value, error) {
	if a == nil {
		return []T{}, nil
	}
	return []T(a), nil
}

// textArraySerializer is the GORM serializer "textarray" of a []string
// field on a text[] column (a note's tags): written with pgx's array codec
// through pgArray, read with its text-format parser. database/sql hands a
// text[] over in its text form, and neither pgtype.FlatArray nor
// pgtype.Array is a sql.Scanner, so the parse goes through a pgtype.Map;
// a Map is not safe for concurrent use and costly to make (3.7 µs a scan
// with a fresh one, 1.8 µs from a pool), so maps holds a few for reuse.
type textArraySerializer struct {
	maps *sync.Pool
}

func newTextArraySerializer() textArraySerializer {
	return textArraySerializer{maps: &sync.Pool{New: func() any { return pgtype.NewMap() }}}
}

// Scan implements schema.SerializerInterface.
func (s textArraySerializer) Scan(ctx context.Context, field *schema.Field, dst reflect.Value, dbValue any) error {
	out := []string{}
	var src []byte
	switch v := dbValue.(type) {
	case nil:
	case string:
		src = []byte(v)
	case []byte:
		src = v
	default:
		return fmt.Errorf("scan text[]: unexpected %T", dbValue)
	}
	if src != nil {
		m := s.maps.Get().(*pgtype.Map)
		err := m.Scan(pgtype.TextArrayOID, pgtype.TextFormatCode, src, &out)
		s.maps.Put(m)
		if err != nil {
			return fmt.Errorf("scan text[]: %w", err)
		}
		if out == nil {
			out = []string{}
		}
	}
	field.ReflectValueOf(ctx, dst).Set(reflect.ValueOf(out))
	return nil
}

// Value implements schema.SerializerValuerInterface.
func (textArraySerializer) Value(_ context.Context, _ *schema.Field, _ reflect.Value, fieldValue any) (any, error) {
	tags, _ := fieldValue.([]string)
	return pgArray[string](tags).Value()
}
