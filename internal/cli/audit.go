package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"strings"

	"github.com/sharq-dev/sharq/internal/access"
	"github.com/sharq-dev/sharq/internal/sharqapi"
)

// auditFormat lays out the audit table, fixed-width as entries stream.
const auditFormat = "%-19s  %-12s  %-28s  %-24s  %s\n"

// auditLog prints the audit log, and with follow its new entries.
func auditLog(ctx context.Context, c *client, v *verb, follow bool) error {
	q := url.Values{}
	if follow {
		q.Set("follow", "true")
	}
	resp, err := c.sharqGet(ctx, sharqapi.AuditPath, q)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	err = copyAudit(resp.Body, v.stdout, v.json())
	if follow && ctx.Err() != nil {
		return nil
	}
	return err
}

func copyAudit(r io.Reader, w io.Writer, jsonLines bool) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	if !jsonLines {
		fmt.Fprintf(w, auditFormat, "TIME", "KEY", "OPERATION", "RESULT", "RESOURCE")
	}
	for sc.Scan() {
		if jsonLines {
			if _, err := fmt.Fprintf(w, "%s\n", sc.Bytes()); err != nil {
				return err
			}
			continue
		}
		var e access.AuditEntry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return fmt.Errorf("the server sent a malformed audit entry: %w", err)
		}
		line := fmt.Sprintf(auditFormat, clock(e.Time.UnixMilli()), truncate(e.Key, 12), truncate(e.Operation, 28),
			truncate(e.Result, 24), e.Resource)
		if _, err := io.WriteString(w, strings.TrimRight(line, " \n")+"\n"); err != nil {
			return err
		}
	}
	return sc.Err()
}
