package access

import (
	"encoding/json"
	"strconv"
	"time"
)

// AppendJSON appends e as json.Marshal writes it: by hand when its time is
// in UTC and its strings need no escape, as in every entry the server
// makes, else through json.Marshal.
func (e AuditEntry) AppendJSON(b []byte) ([]byte, error) {
	if y := e.Time.Year(); e.Time.Location() != time.UTC || y < 0 || y > 9999 ||
		!plain(e.Key) || !plain(e.AccessKeyID) || !plain(e.Operation) || !plain(e.Resource) || !plain(e.Result) || !plain(e.RequestID) {
		doc, err := json.Marshal(e)
		return append(b, doc...), err
	}
	b = append(b, '{')
	if e.Seq != 0 {
		b = append(b, `"seq":`...)
		b = strconv.AppendInt(b, e.Seq, 10)
		b = append(b, ',')
	}
	b = append(b, `"time":"`...)
	b = e.Time.AppendFormat(b, time.RFC3339Nano)
	b = appendMember(b, `","key":"`, e.Key)
	if e.AccessKeyID != "" {
		b = appendMember(b, `","accessKeyId":"`, e.AccessKeyID)
	}
	b = appendMember(b, `","operation":"`, e.Operation)
	b = appendMember(b, `","resource":"`, e.Resource)
	b = appendMember(b, `","result":"`, e.Result)
	b = appendMember(b, `","requestId":"`, e.RequestID)
	return append(b, `"}`...), nil
}

func appendMember(b []byte, sep, v string) []byte {
	return append(append(b, sep...), v...)
}

// plain tells whether encoding/json writes s as it is, in quotes:
// printable ASCII but for quotes, backslashes and the HTML characters it
// escapes.
func plain(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20 || c >= 0x7f, c == '"', c == '\\', c == '<', c == '>', c == '&':
			return false
		}
	}
	return true
}
