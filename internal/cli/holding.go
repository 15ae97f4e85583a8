package cli

import (
	"fmt"
	"slices"
	"strings"

	"github.com/sharq-dev/sharq/internal/sharqapi"
)

// Whose capacity a running job holds, as the tables and describe show it.

// holding is whose capacity a running job of a quota share holds.
type holding = sharqapi.Holding

// capacityHeader names the jobs table's column of capacityCell; it follows
// STATUS.
const capacityHeader = "CAPACITY"

// capacityWidth caps the column: "own+QS2" and "from QS2" fit, a long
// share name is cut in the middle.
const capacityWidth = 16

// withCapacityColumn adds the CAPACITY column after STATUS and returns
// its index. It is always there, "-" for jobs that hold nothing, so that
// the table keeps its columns from one call to the next whoever borrows.
func withCapacityColumn(header []string) ([]string, int) {
	i := slices.Index(header, "STATUS") + 1
	return slices.Insert(header, i, capacityHeader), i
}

// capacityCell says whose capacity a running job holds: "own", "from QS2"
// (all borrowed from QS2), "own+QS2", "from spare" (the service
// environment's capacity beyond all share limits); "-" for other jobs.
func capacityCell(h *sharqapi.Holding) string {
	if h == nil {
		return "-"
	}
	var parts []string
	if len(h.Own) > 0 {
		parts = append(parts, "own")
	}
	for _, l := range lenders(h) {
		parts = append(parts, lenderName(l))
	}
	s := strings.Join(parts, "+")
	if len(h.Own) == 0 && s != "" {
		s = "from " + s
	}
	return squeeze(orDash(s), capacityWidth)
}

// lenders lists the shares a job borrows from, in the holding's order
// ("" for the capacity beyond all share limits), each once.
func lenders(h *sharqapi.Holding) []string {
	var out []string
	for _, l := range h.Borrowed {
		if !slices.Contains(out, l.Lender) {
			out = append(out, l.Lender)
		}
	}
	return out
}

func lenderName(l string) string {
	if l == "" {
		return "spare"
	}
	return l
}

// reclaimNote is "reclaimable by QS2" for a job that borrows from shares
// with waiting jobs that will take their capacity back; else "".
func reclaimNote(h *sharqapi.Holding) string {
	if h == nil {
		return ""
	}
	var by []string
	for _, l := range h.Borrowed {
		if l.Reclaimable && !slices.Contains(by, l.Lender) {
			by = append(by, l.Lender)
		}
	}
	if len(by) == 0 {
		return ""
	}
	return "reclaimable by " + strings.Join(by, ", ")
}

// holdingText is describe's line: "1×ml.g5.xlarge own, 1×ml.g5.xlarge
// borrowed from QS2 (reclaimable: QS2 has a waiting job that fits its
// limit)".
func holdingText(h *sharqapi.Holding) string {
	if h == nil {
		return ""
	}
	var parts []string
	for _, o := range h.Own {
		parts = append(parts, fmt.Sprintf("%d×%s own", o.Count, o.Unit))
	}
	for _, l := range h.Borrowed {
		s := fmt.Sprintf("%d×%s borrowed from %s", l.Count, l.Unit, l.Lender)
		switch {
		case l.Lender == "":
			s = fmt.Sprintf("%d×%s borrowed from spare capacity (beyond the quota share limits; not reclaimed)", l.Count, l.Unit)
		case l.Reclaimable:
			s += fmt.Sprintf(" (reclaimable: %s has a waiting job that fits its limit)", l.Lender)
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}
