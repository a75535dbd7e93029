package postgres

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"

	"github.com/jackc/pgx/v5/pgproto3"
)

// ErrCommitNotReplicated is a commit the server acknowledged without the
// synchronous standby having it: PostgreSQL answers a commit whose wait for
// the standby was cancelled (by statement_timeout, or a cancel request)
// with success and a WARNING. Under synchronous replication that success
// is a lie a failover can undo, so the connection is cut instead and the
// caller sees the commit's outcome as unknown (Unavailable), which is what
// it is.
var ErrCommitNotReplicated = errors.New("commit not confirmed by the synchronous standby")

// syncRepCanceled starts the messages of both cancelled waits (the
// second one also ends the session): "canceling wait for synchronous
// replication due to user request" and "canceling the wait for
// synchronous replication and terminating connection ...". Servers run
// with English messages (lc_messages C), as the drills' image does.
var syncRepCanceled = [][]byte{[]byte("canceling wait for synchronous replication"), []byte("canceling the wait for synchronous replication")}

// maxNotice bounds the notice kept while it is parsed; a longer one is not
// the warning looked for.
const maxNotice = 8 << 10

// buildSyncRepFrontend is pgx's frontend on a reader that follows the
// server's message framing and fails the read that carries the warning of
// a cancelled synchronous-replication wait. Only notices are looked into,
// never rows, so no stored data can trip it.
func buildSyncRepFrontend(r io.Reader, w io.Writer) *pgproto3.Frontend {
	return pgproto3.NewFrontend(&syncRepGuard{r: r}, w)
}

// syncRepGuard tracks message boundaries: a message is a type byte, a
// big-endian int32 length that counts itself, and the body.
type syncRepGuard struct {
	r      io.Reader
	hdr    [5]byte
	hdrN   int
	remain int    // body bytes of the current message still to come
	notice []byte // the current notice's body, when the message is one
	inN    bool
	failed bool
}

func (g *syncRepGuard) Read(p []byte) (int, error) {
	if g.failed {
		return 0, ErrCommitNotReplicated
	}
	n, err := g.r.Read(p)
	if g.scan(p[:n]) {
		g.failed = true
		return 0, ErrCommitNotReplicated
	}
	return n, err
}

// scan consumes b and reports whether a complete notice in it is the
// warning of a cancelled synchronous-replication wait.
func (g *syncRepGuard) scan(b []byte) bool {
	for len(b) > 0 {
		if g.remain == 0 && g.hdrN < 5 {
			k := copy(g.hdr[g.hdrN:], b)
			g.hdrN += k
			b = b[k:]
			if g.hdrN < 5 {
				return false
			}
			size := int(binary.BigEndian.Uint32(g.hdr[1:])) - 4
			g.inN = g.hdr[0] == 'N'
			g.notice = g.notice[:0]
			if size <= 0 {
				g.hdrN = 0
				continue
			}
			g.remain = size
			continue
		}
		k := min(g.remain, len(b))
		if g.inN && len(g.notice)+k <= maxNotice {
			g.notice = append(g.notice, b[:k]...)
		}
		g.remain -= k
		b = b[k:]
		if g.remain == 0 {
			g.hdrN = 0
			if g.inN && cancelledWait(g.notice) {
				return true
			}
		}
	}
	return false
}

// cancelledWait reads a NoticeResponse body (fields of a code byte and a
// NUL-terminated string, ended by a NUL) for the message field.
func cancelledWait(body []byte) bool {
	for len(body) > 1 {
		code := body[0]
		end := bytes.IndexByte(body[1:], 0)
		if end < 0 {
			return false
		}
		val := body[1 : 1+end]
		if code == 'M' {
			for _, prefix := range syncRepCanceled {
				if bytes.HasPrefix(val, prefix) {
					return true
				}
			}
			return false
		}
		body = body[2+end:]
	}
	return false
}
