package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// ANSI escape sequences of the full-screen view.
const (
	escAltScreen  = "\x1b[?1049h\x1b[?25l" // alternate screen, cursor hidden
	escMainScreen = "\x1b[?25h\x1b[?1049l" // back to the shell's screen
	escHome       = "\x1b[H"
	escEraseLine  = "\x1b[K"
	escEraseBelow = "\x1b[J"
)

// Top is `sharq top`: the shares' capacity and the running and waiting
// jobs, redrawn every second on the full screen until q is pressed. When
// stdout is not a terminal it prints one frame and exits.
func Top(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	v := newVerb("top", "", "Watch the shares and jobs live (q to quit).", stdout, stderr, false)
	var f sharesFlags
	v.fs.StringVar(&f.queue, "queue", "", "only this job queue")
	interval := v.fs.Duration("interval", time.Second, "time between refreshes")
	_, err := v.parse(args, 0, 0)
	if err == nil && *interval <= 0 {
		err = usagef("--interval must be more than 0, not %s", *interval)
	}
	if err != nil {
		return v.exit(err)
	}
	return v.exit(top(ctx, v, f, *interval))
}

func top(ctx context.Context, v *verb, f sharesFlags, interval time.Duration) error {
	c, err := v.conn.dial(ctx)
	if err != nil {
		return err
	}
	s := &topScreen{c: c, filter: f, endpoint: v.conn.endpoint}
	if !isTerminal(v.stdout) {
		frame, err := s.frame(ctx)
		if err != nil {
			return err
		}
		_, err = io.WriteString(v.stdout, frame)
		return err
	}
	restore := rawInput(os.Stdin)
	defer restore()
	return s.live(ctx, os.Stdin, v.stdout, interval, terminalSize(v.stdout))
}

// topScreen draws the frames of `sharq top`.
type topScreen struct {
	c        *client
	filter   sharesFlags
	endpoint string
}

// live redraws a frame every interval until q arrives on in or ctx ends.
// size reports the terminal's width and height (0 when unknown).
func (s *topScreen) live(ctx context.Context, in io.Reader, out io.Writer, interval time.Duration, size func() (int, int)) error {
	quit := make(chan struct{})
	go func() {
		defer close(quit)
		b := make([]byte, 1)
		for {
			n, err := in.Read(b)
			if err != nil || (n == 1 && (b[0] == 'q' || b[0] == 'Q')) {
				return
			}
		}
	}()
	io.WriteString(out, escAltScreen)
	defer io.WriteString(out, escMainScreen)
	for {
		frame, err := s.frame(ctx)
		if err != nil {
			// A server that goes away mid-watch is shown, not fatal.
			_, msg := classify(err, s.endpoint)
			frame = fmt.Sprintf("sharq top: %s\n", msg)
		}
		io.WriteString(out, escHome+fit(frame, size)+escEraseBelow)
		select {
		case <-ctx.Done():
			return nil
		case <-quit:
			return nil
		case <-time.After(interval):
		}
	}
}

// frame renders one screen: a header, the shares, then running and
// waiting jobs.
func (s *topScreen) frame(ctx context.Context) (string, error) {
	u, err := s.c.usage(ctx, s.filter)
	if err != nil {
		return "", err
	}
	rows, err := s.c.jobRows(ctx, s.filter.queue, "", activeStatuses)
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "sharq top  %s  %s  (q to quit)\n", s.endpoint, now().Local().Format("15:04:05"))
	fmt.Fprintf(&b, "jobs: %s\n\n", countsLine(u.JobCounts))
	if err := writeUsage(&b, u); err != nil {
		return "", err
	}
	var running, waiting []jobRow
	for _, r := range rows {
		if stage(r.Status) == 0 {
			running = append(running, r)
		} else {
			waiting = append(waiting, r)
		}
	}
	fmt.Fprintf(&b, "\nRUNNING (%d)\n", len(running))
	writeJobs(&b, running)
	fmt.Fprintf(&b, "\nWAITING (%d)\n", len(waiting))
	writeJobs(&b, waiting)
	return b.String(), nil
}

// countsLine lists the non-zero job counts in lifecycle order.
func countsLine(counts map[string]int) string {
	var parts []string
	for _, st := range allStatuses {
		if n := counts[st]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, st))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// fit cuts a frame to the terminal and ends each line with an erase, so a
// shorter line leaves nothing of the previous frame behind.
func fit(frame string, size func() (int, int)) string {
	width, height := size()
	lines := strings.Split(strings.TrimSuffix(frame, "\n"), "\n")
	if height > 1 && len(lines) > height-1 {
		lines = append(slices.Clone(lines[:height-2]), "…")
	}
	for i, l := range lines {
		if width > 0 {
			l = truncate(l, width)
		}
		lines[i] = l + escEraseLine
	}
	return strings.Join(lines, "\n") + "\n"
}

// terminalSize reports the size of the terminal w is on.
func terminalSize(w io.Writer) func() (int, int) {
	return func() (int, int) {
		f, ok := w.(*os.File)
		if !ok {
			return 0, 0
		}
		ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ)
		if err != nil {
			return 0, 0
		}
		return int(ws.Col), int(ws.Row)
	}
}

// rawInput makes a terminal deliver key presses at once and unechoed, so
// that q quits without Enter; Ctrl-C still interrupts. It returns the
// function that restores the terminal.
func rawInput(f *os.File) func() {
	fd := int(f.Fd())
	old, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		return func() {}
	}
	raw := *old
	raw.Lflag &^= unix.ICANON | unix.ECHO
	raw.Cc[unix.VMIN], raw.Cc[unix.VTIME] = 1, 0
	if err := unix.IoctlSetTermios(fd, unix.TCSETS, &raw); err != nil {
		return func() {}
	}
	return func() { unix.IoctlSetTermios(fd, unix.TCSETS, old) }
}
