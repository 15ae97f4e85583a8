package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strconv"
	"time"
)

// wire is a minimal HTTP/1.1 client for the load generator's hot paths:
// one request in flight per kept-alive connection, a request written in one
// system call and a response read with one buffered reader, no per-request
// goroutines. It sends the same requests as net/http's client and the SDK
// do (without a signature, which sharq does not check), at a fraction of
// their CPU cost, so that on a small machine the client leaves the CPUs to
// the server.
type wire struct {
	addr, host string
	idle       chan *wireConn
}

type wireConn struct {
	c   net.Conn
	br  *bufio.Reader
	req []byte
}

func newWire(endpoint string, conns int) (*wire, error) {
	u, err := url.Parse(endpoint)
	if err != nil || u.Scheme != "http" || u.Host == "" {
		return nil, fmt.Errorf("the wire client needs an http:// endpoint, not %q", endpoint)
	}
	addr := u.Host
	if u.Port() == "" {
		addr += ":80"
	}
	return &wire{addr: addr, host: u.Host, idle: make(chan *wireConn, conns+16)}, nil
}

func (w *wire) get(ctx context.Context) (*wireConn, error) {
	select {
	case c := <-w.idle:
		return c, nil
	default:
	}
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", w.addr)
	if err != nil {
		return nil, err
	}
	return &wireConn{c: c, br: bufio.NewReaderSize(c, 16<<10)}, nil
}

func (w *wire) put(c *wireConn) {
	select {
	case w.idle <- c:
	default:
		c.c.Close()
	}
}

func (w *wire) close() {
	for {
		select {
		case c := <-w.idle:
			c.c.Close()
		default:
			return
		}
	}
}

// post sends body to path and returns the response body of a 200; any
// other status is an error carrying the body. The returned slice is valid
// until the next call with the same buf.
func (w *wire) post(ctx context.Context, path string, body, buf []byte) ([]byte, error) {
	c, err := w.get(ctx)
	if err != nil {
		return nil, err
	}
	if d, ok := ctx.Deadline(); ok {
		c.c.SetDeadline(d)
	} else {
		c.c.SetDeadline(time.Time{})
	}
	r := c.req[:0]
	r = append(r, "POST "...)
	r = append(r, path...)
	r = append(r, " HTTP/1.1\r\nHost: "...)
	r = append(r, w.host...)
	r = append(r, "\r\nContent-Type: application/json\r\nContent-Length: "...)
	r = strconv.AppendInt(r, int64(len(body)), 10)
	r = append(r, "\r\n\r\n"...)
	r = append(r, body...)
	c.req = r
	if _, err := c.c.Write(r); err != nil {
		c.c.Close()
		return nil, err
	}
	status, resp, keep, err := readResponse(c.br, buf)
	if err != nil {
		c.c.Close()
		return nil, err
	}
	if keep {
		w.put(c)
	} else {
		c.c.Close()
	}
	if status != 200 {
		return nil, fmt.Errorf("%s: %d %s", path, status, bytes.TrimSpace(resp))
	}
	return resp, nil
}

var errChunked = errors.New("chunked responses are not supported")

// readResponse reads one response with a Content-Length body into buf.
func readResponse(br *bufio.Reader, buf []byte) (status int, body []byte, keepAlive bool, err error) {
	line, err := br.ReadSlice('\n')
	if err != nil {
		return 0, nil, false, err
	}
	// "HTTP/1.1 200 OK\r\n"
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) {
		return 0, nil, false, fmt.Errorf("malformed status line %q", line)
	}
	status, err = strconv.Atoi(string(line[9:12]))
	if err != nil {
		return 0, nil, false, fmt.Errorf("malformed status line %q", line)
	}
	length := -1
	keepAlive = true
	for {
		h, err := br.ReadSlice('\n')
		if err != nil {
			return 0, nil, false, err
		}
		h = bytes.TrimRight(h, "\r\n")
		if len(h) == 0 {
			break
		}
		k, v, ok := bytes.Cut(h, []byte(":"))
		if !ok {
			continue
		}
		v = bytes.TrimSpace(v)
		switch {
		case bytes.EqualFold(k, []byte("Content-Length")):
			length, err = strconv.Atoi(string(v))
			if err != nil {
				return 0, nil, false, fmt.Errorf("malformed Content-Length %q", v)
			}
		case bytes.EqualFold(k, []byte("Transfer-Encoding")):
			return 0, nil, false, errChunked
		case bytes.EqualFold(k, []byte("Connection")) && bytes.EqualFold(v, []byte("close")):
			keepAlive = false
		}
	}
	if length < 0 {
		return 0, nil, false, errors.New("response without Content-Length")
	}
	if cap(buf) < length {
		buf = make([]byte, length)
	}
	buf = buf[:length]
	if _, err := io.ReadFull(br, buf); err != nil {
		return 0, nil, false, err
	}
	return status, buf, keepAlive, nil
}
