package sim

// consoleColour is a colour the report shares with the console: rule is a
// selector of internal/web/assets/app.css whose background has it. A
// share's own, borrowed and lent capacity look as in the console's share
// bars, and its jobs' dispatches, preemptions and failures as in the
// console's job timeline (RUNNING, preempted, FAILED). The console colours
// kinds, not shares, so the report does too. TestColoursMatchConsole reads
// app.css and checks every one.
type consoleColour struct {
	rule, hex string
}

var (
	colourOwn        = consoleColour{".seg.own", "#2f6fde"}
	colourBorrowed   = consoleColour{".seg.borrowed", "#f28c28"}
	colourLent       = consoleColour{".seg.lent", "#2bb673"}
	colourDispatched = consoleColour{".timeline li.RUNNING::before", "#2bb673"}
	colourPreempted  = consoleColour{".timeline li.preempted::before", "#f28c28"}
	colourFailed     = consoleColour{".timeline li.FAILED::before", "#d92d20"}

	consoleColours = []consoleColour{colourOwn, colourBorrowed, colourLent, colourDispatched, colourPreempted, colourFailed}
)

// The console's ink, muted text and rule colours (app.css --ink, --muted,
// --line), for text, axes and grid lines.
const (
	inkColour   = "#1c2330"
	mutedColour = "#667085"
	lineColour  = "#e3e6eb"
)

// groupColours tell the groups of the wait chart (classes or priorities)
// apart. They are not kinds of capacity, so they avoid the colours above.
var groupColours = []string{"#444ce7", "#0e9384", "#c11574", "#b54708", "#7839ee", "#088ab2", "#4f7a21", "#475467"}

func groupColour(i int) string { return groupColours[i%len(groupColours)] }
