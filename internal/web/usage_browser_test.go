package web_test

import (
	"testing"

	"github.com/chromedp/chromedp"
)

// TestUsagePage runs the walkthrough's first two steps (med borrows QS2's
// instance, then QS2 takes it back by preempting med) and checks that the
// usage page draws a chart per share with columns of the right kinds, and
// totals that name the lender, the borrower and the preempted part; that
// grouping by owner redraws it; and that the header links to it.
func TestUsagePage(t *testing.T) {
	s := start(t)
	s.setupWalkthrough()
	w := s.step1()
	s.step2(&w)
	ctx := browser(t)
	do(t, ctx, "open the usage page", chromedp.Navigate(s.url+"/usage?since=1h&by=share&measure=instance"))
	waitFor(t, ctx, "a chart per share", `document.querySelectorAll('.usage-group svg.usage-chart').length === 2`)
	group := func(share string) string { return `document.querySelector('.usage-group[data-key="` + share + `"]')` }
	for _, c := range []struct{ what, js string }{
		{"QS1's own and borrowed columns", group("QS1") + `.querySelector('rect.col.own') && ` + group("QS1") + `.querySelector('rect.col.borrowed')`},
		{"QS2's own and lent columns", group("QS2") + `.querySelector('rect.col.own') && ` + group("QS2") + `.querySelector('rect.col.lent')`},
		{"QS1 borrowed from QS2", group("QS1") + `.querySelector('tr[data-kind="borrowed"][data-peer="QS2"]').innerText.includes('from QS2')`},
		{"QS1's preempted part", group("QS1") + `.querySelector('tr[data-kind="preempted"]')`},
		{"QS2 lent to QS1", group("QS2") + `.querySelector('tr[data-kind="lent"][data-peer="QS1"]').innerText.includes('to QS1')`},
		{"the queue named", group("QS1") + `.querySelector('h2').innerText === 'QS1 · ` + queue + `'`},
		{"columns within the chart", `[...document.querySelectorAll('rect.col')].every(r => +r.getAttribute('height') > 0 && +r.getAttribute('y') >= 0)`},
		{"the unit", `document.querySelector('.usage-totals th.num').innerText === 'instance-hours'`},
	} {
		waitFor(t, ctx, c.what, c.js)
	}
	// Borrowed and lent are the same loan, on the same scale.
	if same := eval[bool](t, ctx, `(() => {
		const h = (share, kind) => [...document.querySelectorAll('.usage-group[data-key="' + share + '"] rect.col.' + kind)]
			.reduce((s, r) => s + +r.dataset.hours, 0);
		return Math.abs(h('QS1', 'borrowed') - h('QS2', 'lent')) < 1e-9 && h('QS1', 'borrowed') > 0;
	})()`); !same {
		t.Error("QS1's borrowed columns do not add up to QS2's lent ones")
	}
	screenshot(t, ctx, "usage")

	// By owner: the jobs were submitted without a signature's owner here,
	// so one group, with no lent capacity (a share's, not an owner's).
	do(t, ctx, "group by owner", chromedp.SetValue(`select[name="by"]`, "owner"))
	eval[bool](t, ctx, `document.querySelector('select[name="by"]').dispatchEvent(new Event('change'))`)
	waitFor(t, ctx, "one group by owner", `document.querySelectorAll('.usage-group').length === 1 && !document.querySelector('tr[data-kind="lent"]') && location.search.includes('by=owner')`)
	waitFor(t, ctx, "the unsigned jobs' group named", `document.querySelector('.usage-group h2').innerText === '(unsigned)'`)

	do(t, ctx, "open the overview", chromedp.Navigate(s.url+"/"))
	waitFor(t, ctx, "the overview", `document.querySelector('.bar')`)
	do(t, ctx, "follow the usage link", chromedp.Click(`#nav-usage`))
	waitFor(t, ctx, "the usage page from the header", `location.pathname === '/usage' && document.querySelectorAll('.usage-group').length === 2`)
}
