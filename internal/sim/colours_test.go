package sim

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// consoleCSS is the console's stylesheet, whose colours the report reuses.
const consoleCSS = "../web/assets/app.css"

// cssBackgrounds reads a stylesheet's custom properties and, per selector,
// its background with var() resolved.
func cssBackgrounds(t *testing.T, css string) (vars, backgrounds map[string]string) {
	t.Helper()
	vars, backgrounds = map[string]string{}, map[string]string{}
	for _, m := range regexp.MustCompile(`(--[a-z-]+)\s*:\s*([^;]+);`).FindAllStringSubmatch(css, -1) {
		vars[m[1]] = strings.ToLower(strings.TrimSpace(m[2]))
	}
	for _, m := range regexp.MustCompile(`([^{}]+)\{([^}]*)\}`).FindAllStringSubmatch(css, -1) {
		bg := regexp.MustCompile(`(?:^|;)\s*background\s*:\s*([^;]+)`).FindStringSubmatch(m[2])
		if bg == nil {
			continue
		}
		value := strings.TrimSpace(bg[1])
		if v := regexp.MustCompile(`^var\((--[a-z-]+)\)$`).FindStringSubmatch(value); v != nil {
			value = vars[v[1]]
		}
		for _, sel := range strings.Split(m[1], ",") {
			backgrounds[strings.Join(strings.Fields(sel), " ")] = value
		}
	}
	return vars, backgrounds
}

// Ensure the report's colours are the console's: each kind of capacity
// and each kind of event has the background of the console's rule for it,
// and text, axes and rules the console's ink, muted and line colours.
func TestColoursMatchConsole(t *testing.T) {
	b, err := os.ReadFile(consoleCSS)
	if err != nil {
		t.Fatal(err)
	}
	vars, backgrounds := cssBackgrounds(t, string(b))
	for _, c := range consoleColours {
		got, ok := backgrounds[c.rule]
		if !ok {
			t.Errorf("%s has no rule %q with a background", consoleCSS, c.rule)
			continue
		}
		if got != c.hex {
			t.Errorf("%s: the console's background is %s, the report's %s", c.rule, got, c.hex)
		}
	}
	for name, hex := range map[string]string{"--ink": inkColour, "--muted": mutedColour, "--line": lineColour} {
		if vars[name] != hex {
			t.Errorf("%s: the console's is %q, the report's %s", name, vars[name], hex)
		}
	}
	// The wait chart's groups are not kinds of capacity or events: none of
	// their colours may be mistaken for one.
	for _, g := range groupColours {
		if slices.ContainsFunc(consoleColours, func(c consoleColour) bool { return c.hex == g }) {
			t.Errorf("group colour %s is also a kind's colour", g)
		}
	}
}
