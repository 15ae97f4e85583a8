// The sharq console. It reads the server's state from one server-sent
// event stream (/sharq/v1/stream) and redraws when a new state or job event
// arrives; it never reloads. Everything is built with DOM calls, not HTML
// strings, because job names and reasons come from users.
'use strict';

(function () {
  const main = document.getElementById('main');
  const TERMINAL = new Set(['SUCCEEDED', 'FAILED']);
  const MAX_EVENTS = 200;
  const names = new Map(); // job ID -> name, to show names in reasons

  // el builds an element: el('a', {href: '/'}, 'text', child, ...).
  function el(tag, attrs, ...kids) {
    const n = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k === 'class') n.className = v;
      else if (k === 'text') n.textContent = v;
      else if (k.startsWith('on')) n.addEventListener(k.slice(2), v);
      else n.setAttribute(k, v === true ? '' : String(v));
    }
    for (const kid of kids.flat(Infinity)) {
      if (kid === undefined || kid === null || kid === false) continue;
      n.append(kid instanceof Node ? kid : document.createTextNode(String(kid)));
    }
    return n;
  }

  function clock(ms) {
    if (!ms) return '';
    const d = new Date(ms);
    return d.toLocaleTimeString([], { hour12: false });
  }

  function stamp(ms) {
    if (!ms) return '';
    const d = new Date(ms);
    return d.toLocaleDateString([], { month: 'short', day: 'numeric' }) + ' ' + clock(ms);
  }

  function ago(ms) {
    if (!ms) return '';
    let s = Math.max(0, Math.round((Date.now() - ms) / 1000));
    if (s < 60) return s + 's ago';
    if (s < 3600) return Math.floor(s / 60) + 'm ago';
    if (s < 86400) return Math.floor(s / 3600) + 'h ' + Math.floor((s % 3600) / 60) + 'm ago';
    return Math.floor(s / 86400) + 'd ago';
  }

  function times(n) {
    return n === 0 ? 'never' : n === 1 ? 'once' : n + ' times';
  }

  // shortID is the last 8 characters of a job ID, as the CLI prints it
  // (IDs begin with their time, so the end tells jobs apart).
  function shortID(id) {
    return id.length > 8 ? id.slice(-8) : id;
  }

  // jobLabel names a job as the CLI does: "train (0e5a91c2)".
  function jobLabel(id, name) {
    return name ? name + ' (' + shortID(id) + ')' : id;
  }

  // jobLink shows the name, cut with an ellipsis where it is long (the
  // whole of it on hover), and the short ID.
  function jobLink(id, name) {
    return el('a', { href: '/jobs/' + encodeURIComponent(id), 'data-job-link': id, class: 'job-link', title: jobLabel(id, name) },
      el('span', { class: 'job-name', text: name || id }), name ? el('span', { class: 'short-id', text: ' (' + shortID(id) + ')' }) : null);
  }

  // reasonText replaces the job IDs a reason names with the jobs' names
  // and short IDs.
  function reasonText(r) {
    if (!r) return '';
    return r.replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, (id) => names.has(id) ? jobLabel(id, names.get(id)) : id);
  }

  function statusBadge(s) {
    return el('span', { class: 'status ' + s, text: s });
  }

  function setConn(state, text) {
    const c = document.getElementById('conn');
    c.dataset.state = state;
    c.textContent = text;
  }

  function setCounts(counts) {
    const box = document.getElementById('counts');
    box.replaceChildren();
    for (const s of ['RUNNABLE', 'SCHEDULED', 'STARTING', 'RUNNING', 'SUCCEEDED', 'FAILED']) {
      if (counts && counts[s]) box.append(el('span', {}, s.toLowerCase() + ' ', el('b', { text: counts[s] })), '  ');
    }
  }

  // connect opens the stream; the server starts each connection with a
  // full state. EventSource reconnects by itself after a network error; a
  // refusal closes it, and it is opened again with a new signature.
  async function connect(onState, onJob) {
    const key = sharqSigV4.key();
    const url = key ? await sharqSigV4.presign(key, '/sharq/v1/stream', 3600) : '/sharq/v1/stream';
    const es = new EventSource(url);
    es.addEventListener('state', (e) => onState(JSON.parse(e.data)));
    es.addEventListener('job', (e) => onJob(JSON.parse(e.data)));
    es.onopen = () => setConn('live', 'live');
    es.onerror = async () => {
      setConn('down', 'reconnecting…');
      if (es.readyState !== EventSource.CLOSED) return;
      if (await needsSignIn()) return;
      setTimeout(() => connect(onState, onJob), 2000);
    };
    return es;
  }

  // send makes a request to this server, signed with the key signed in
  // with, if any.
  async function send(method, path, body) {
    const opts = { method, headers: {} };
    const key = sharqSigV4.key();
    if (body !== undefined) opts.body = JSON.stringify(body);
    if (key) opts.headers = await sharqSigV4.headers(key, method, path, opts.body, body !== undefined ? 'application/json' : '');
    else if (body !== undefined) opts.headers['Content-Type'] = 'application/json';
    return fetch(path, opts);
  }

  async function api(method, path, body) {
    const resp = await send(method, path, body);
    const text = await resp.text();
    let data = null;
    try { data = text ? JSON.parse(text) : null; } catch (_) { data = null; }
    if (!resp.ok) {
      const err = new Error((data && data.message) || resp.status + ' ' + resp.statusText);
      err.status = resp.status;
      throw err;
    }
    return data;
  }

  // ---- signing in

  const AUTH_CODES = ['MissingAuthenticationTokenException', 'UnrecognizedClientException',
    'InvalidSignatureException', 'IncompleteSignatureException'];

  // needsSignIn asks the server whether this tab may read; when it says
  // the request needs (other) credentials, it shows the sign-in form.
  async function needsSignIn() {
    let resp;
    try { resp = await send('GET', '/sharq/v1/console/state'); } catch (_) { return false; }
    if (resp.status !== 403 && resp.status !== 400) return false;
    const code = resp.headers.get('X-Amzn-ErrorType') || '';
    let msg = '';
    try { msg = (await resp.json()).message || ''; } catch (_) { /* not JSON */ }
    if (!AUTH_CODES.includes(code)) return false;
    signInForm(sharqSigV4.key() ? msg : 'This server checks who is calling: sign in with an access key.');
    return true;
  }

  function signInForm(msg) {
    setConn('down', 'signed out');
    const id = el('input', { id: 'login-id', autocomplete: 'username', placeholder: 'SKIA…', size: 24 });
    const secret = el('input', { id: 'login-secret', type: 'password', autocomplete: 'current-password', size: 44 });
    const region = el('input', { id: 'login-region', value: (sharqSigV4.key() || {}).region || 'us-east-1', size: 12 });
    const form = el('form', { class: 'panel login', id: 'login', onsubmit: (e) => {
      e.preventDefault();
      sharqSigV4.signIn(id.value.trim(), secret.value, region.value.trim());
      location.reload();
    } },
    el('h2', { text: 'Sign in' }), el('p', { class: 'msg err', id: 'login-msg', text: msg }),
    el('label', {}, 'Access key ID ', id), el('label', {}, 'Secret access key ', secret), el('label', {}, 'Region ', region),
    el('button', { type: 'submit', id: 'login-submit', text: 'Sign in' }));
    main.replaceChildren(form);
  }

  function authControl() {
    const key = sharqSigV4.key();
    if (!key) return;
    const mine = el('input', { type: 'checkbox', id: 'my-jobs', onchange: () => { myJobsOnly = mine.checked; filterOwners(); } });
    document.querySelector('header.top').append(el('span', { class: 'auth', id: 'auth' },
      el('label', { title: 'show only the jobs submitted with this key' }, mine, ' my jobs'), ' ', key.id + ' ',
      el('button', { id: 'sign-out', text: 'sign out', onclick: () => { sharqSigV4.signOut(); location.reload(); } })));
    // The principal the server records as the owner of this key's jobs.
    api('GET', '/sharq/v1/whoami').then((who) => { me = (who && who.principal) || ''; filterOwners(); }).catch(() => {});
  }

  // "my jobs": the waiting and running jobs of others are hidden.
  let me = '', myJobsOnly = false;
  function filterOwners() {
    for (const row of document.querySelectorAll('[data-owner]')) row.hidden = myJobsOnly && row.dataset.owner !== me;
  }

  // ---- start estimates: when a waiting job is expected to start, from the
  // scheduler run forward on the server (sharqapi.StartEstimate).

  const BASIS = { MAX_RUNTIME: 'max runtime', TIME_LIMIT: 'time limit', HISTORY: 'run time history' };

  // inTime says coarsely how long until ms: "45s", "8m" (to the nearest
  // minute), "2h 05m", "3d 4h".
  function inTime(ms) {
    const s = Math.max(0, Math.round((ms - Date.now()) / 1000));
    if (s < 60) return s + 's';
    const m = Math.round(s / 60);
    if (m < 60) return m + 'm';
    if (m < 1440) return Math.floor(m / 60) + 'h ' + String(m % 60).padStart(2, '0') + 'm';
    return Math.floor(m / 1440) + 'd ' + Math.floor((m % 1440) / 60) + 'h';
  }

  function startsNow(e) {
    return !e.basis || !e.basis.length || e.at <= Date.now();
  }

  // etaShort is an estimate in a few words, for the queue cards.
  function etaShort(e) {
    if (!e) return 'start not estimated yet';
    switch (e.kind) {
      case 'ESTIMATED': return startsNow(e) ? 'starts now' : 'starts in ~' + inTime(e.at) + ', at ' + clock(e.at);
      case 'NOT_WITHIN': return 'not within ' + inTime(e.at);
      case 'NO_BASIS': return 'start unknown';
      case 'NEVER': return 'never starts as configured';
    }
    return e.kind;
  }

  // etaLong says an estimate in full, with what it rests on.
  function etaLong(e) {
    if (!e) return 'not estimated yet';
    switch (e.kind) {
      case 'ESTIMATED':
        if (startsNow(e)) return 'now';
        return stamp(e.at) + ' (in ' + inTime(e.at) + '), estimated from ' + e.basis.map((b) => BASIS[b] || b).join(' + ');
      case 'NOT_WITHIN': return 'not within ' + inTime(e.at) + ' (not before ' + stamp(e.at) + ')';
      case 'NO_BASIS': return 'unknown: the capacity it waits for is held by jobs that declare no max runtime or time limit, ' +
        'and their shares have no run time history';
      case 'NEVER': return 'never, as configured';
    }
    return e.kind;
  }

  function etaBadge(e) {
    return el('span', { class: 'eta ' + (e ? e.kind.toLowerCase() : 'pending'), 'data-eta': e ? e.kind : 'PENDING',
      title: 'expected start: ' + etaLong(e), text: etaShort(e) });
  }

  // ---- the overview

  const SEGMENTS = [
    ['own', 'own: used within its limit'],
    ['borrowed', 'borrowed: used beyond its limit'],
    ['lent', 'lent: its idle capacity in use by borrowers'],
    ['idle', 'idle: free, lendable'],
    ['reserved', 'reserved idle: free, kept for the share (RESERVE)'],
  ];

  function legend() {
    return el('div', { class: 'legend' }, SEGMENTS.map(([k, title]) =>
      el('span', { title }, el('i', { class: k }), k === 'reserved' ? 'reserved idle' : k)), reclaimKey());
  }

  // reclaimKey explains the outline of borrowed capacity its lender will
  // take back.
  function reclaimKey() {
    return el('span', { title: 'reclaimable: the lender has a waiting job that fits its limit and takes this capacity back first' },
      el('i', { class: 'borrowed reclaim-key' }), '↺ reclaimable');
  }

  // scales gives each unit of a queue the bar length that stands for the
  // most instances any share or environment of the queue shows on it.
  function scales(q) {
    const s = {};
    const grow = (u, n) => { s[u] = Math.max(s[u] || 0, n); };
    for (const e of q.environments) for (const u of e.units) grow(u.unit, u.limit);
    for (const sh of q.shares) for (const u of sh.units) grow(u.unit, u.own + u.borrowed + u.lent + u.idle);
    return s;
  }

  function bar(q, sh, u, scale) {
    const b = el('div', { class: 'bar', 'data-queue': q.name, 'data-share': sh.name, 'data-unit': u.unit });
    const segs = capacitySegments(sh, u);
    for (const sg of segs) {
      const seg = el('span', { class: 'seg ' + sg.kind + (sg.reclaimable ? ' reclaimable' : ''), 'data-n': sg.n,
        'data-lender': sg.lender, 'data-borrower': sg.borrower, title: segmentTitle(sg) },
      sg.label ? el('span', { class: 'seg-label', text: sg.label }) : null);
      seg.style.width = (100 * sg.n / scale) + '%';
      b.append(seg);
    }
    // A tick where the share's limit ends: what lies beyond it is borrowed.
    if (u.limit > 0 && u.limit < scale) {
      const mark = el('span', { class: 'limit-mark', title: 'limit ' + u.limit });
      mark.style.left = (100 * u.limit / scale) + '%';
      b.append(mark);
    }
    const label = segs.map(segmentTitle).join(' · ');
    return [b, el('div', { class: 'bar-label', text: (label || 'nothing') + ' — limit ' + u.limit })];
  }

  // capacitySegments splits a share's use of a unit for its bar: own;
  // borrowed, one segment per lender, in the order the scheduler attributes
  // them (the capacity beyond all share limits, lender '', first; lenders
  // that will take theirs back last, nearest the end of the bar); lent, one
  // per borrower; idle (reserved for RESERVE).
  function capacitySegments(sh, u) {
    const out = [{ kind: 'own', n: u.own }];
    const rank = (f) => f.share === '' ? 0 : f.reclaimable ? 2 : 1;
    const from = (u.borrowedFrom || []).slice().sort((a, b) => rank(a) - rank(b));
    for (const f of (from.length ? from : [{ count: u.borrowed }])) {
      const label = f.share === undefined ? '' : f.share === '' ? 'spare' : 'from ' + f.share + (f.reclaimable ? ' ↺' : '');
      out.push({ kind: 'borrowed', n: f.count, lender: f.share, reclaimable: f.reclaimable, label });
    }
    for (const t of (u.lentTo && u.lentTo.length ? u.lentTo : [{ count: u.lent }])) {
      out.push({ kind: 'lent', n: t.count, borrower: t.share, label: t.share ? 'to ' + t.share : '' });
    }
    out.push({ kind: sh.strategy === 'RESERVE' ? 'reserved' : 'idle', n: u.idle });
    return out.filter((sg) => sg.n);
  }

  function segmentTitle(sg) {
    switch (sg.kind) {
      case 'borrowed':
        if (sg.lender === undefined) return sg.n + ' borrowed';
        if (sg.lender === '') return sg.n + ' borrowed from spare capacity (beyond the share limits)';
        return sg.n + ' borrowed from ' + sg.lender + (sg.reclaimable ? ', reclaimable by ' + sg.lender : '');
      case 'lent':
        return sg.n + ' lent' + (sg.borrower ? ' to ' + sg.borrower : '');
      case 'reserved':
        return sg.n + ' reserved idle';
    }
    return sg.n + ' ' + sg.kind;
  }

  function shareBadges(sh) {
    const out = [];
    if (sh.strategy) out.push(el('span', { class: 'badge', text: sh.strategy }));
    if (sh.strategy === 'LEND_AND_BORROW') out.push(el('span', { class: 'badge', text: 'borrow ' + (sh.borrowLimit < 0 ? 'unlimited' : sh.borrowLimit + '%') }));
    if (sh.inSharePreemption) out.push(el('span', { class: 'badge', text: 'in-share preemption' }));
    if (sh.minimumRuntimeSeconds) out.push(el('span', { class: 'badge min-runtime', title: 'a job of this share is not preempted in its first ' + sh.minimumRuntimeSeconds + 's (minimum runtime)', text: 'min runtime ' + sh.minimumRuntimeSeconds + 's' }));
    if (sh.state && sh.state !== 'ENABLED') out.push(el('span', { class: 'badge off', text: sh.state }));
    for (const w of sh.warnings || []) out.push(el('span', { class: 'badge warn', title: w, text: '⚠ ' + w }));
    return out;
  }

  function sharesTable(q) {
    const sc = scales(q);
    const rows = [];
    for (const sh of q.shares) {
      const us = sh.units.length ? sh.units : [];
      if (!us.length) {
        rows.push(el('tr', {}, el('td', {}, el('span', { class: 'share-name', text: sh.name || '(FIFO)' }), shareBadges(sh)),
          el('td', { class: 'unit', text: '—' }), el('td', { class: 'bar-cell muted', text: 'no capacity limit' }),
          el('td', { class: 'num', text: sh.runnable })));
        continue;
      }
      us.forEach((u, i) => {
        rows.push(el('tr', { 'data-share-row': sh.name },
          el('td', {}, i === 0 ? [el('span', { class: 'share-name', text: sh.name || '(FIFO)' }), shareBadges(sh)] : null),
          el('td', { class: 'unit', text: u.unit }),
          el('td', { class: 'bar-cell' }, bar(q, sh, u, Math.max(1, sc[u.unit] || 1))),
          el('td', { class: 'num', text: i === 0 ? sh.runnable : '' })));
      });
    }
    return el('table', { class: 'shares' },
      el('thead', {}, el('tr', {}, el('th', { text: 'share' }), el('th', { text: 'unit' }), el('th', { text: 'capacity' }), el('th', { class: 'num', text: 'waiting' }))),
      el('tbody', {}, rows));
  }

  function envLine(q) {
    return q.environments.map((e) => el('div', { class: 'muted' }, 'service environment ', el('b', { text: e.name }), ': ',
      e.units.map((u) => u.used + ' of ' + u.limit + ' ' + u.unit + ' in use').join(', ') || 'no capacity'));
  }

  function front(q, sh) {
    const list = el('ol', {});
    for (const j of sh.front) {
      list.append(el('li', { 'data-job': j.id, 'data-owner': j.owner || '' },
        el('span', { class: 'pos', text: '#' + j.position }),
        el('span', {}, jobLink(j.id, j.name)),
        el('span', { class: 'prio', text: 'priority ' + j.priority + (j.preemptions ? ' · preempted ' + j.preemptions + '×' : '') }),
        etaBadge(j.eta),
        el('span', { class: 'reason' + (j.misconfigured ? ' bad' : ''), text: reasonText(j.reason) })));
    }
    const more = sh.runnable - sh.front.length;
    return el('div', { class: 'front', 'data-front': sh.name },
      el('h4', {}, (sh.name || 'queue') + ' ', el('span', { class: 'muted', text: sh.runnable + ' waiting' })),
      sh.front.length ? list : el('div', { class: 'muted', text: 'nothing waiting' }),
      more > 0 ? el('div', { class: 'muted', text: '… and ' + more + ' more' + (sh.frontPartial ? ' (too many to order here; the first is the head)' : '') }) : null);
  }

  function dispatchedTable(q) {
    if (!q.dispatched.length) return el('p', { class: 'muted', text: 'No job holds capacity.' });
    return el('table', { class: 'holding' },
      el('thead', {}, el('tr', {}, ['job', 'share', 'status', 'capacity', 'priority', 'preempted', 'started'].map((h) => el('th', { text: h })))),
      el('tbody', {}, q.dispatched.map((j) => el('tr', { 'data-job': j.id, 'data-owner': j.owner || '' },
        el('td', {}, jobLink(j.id, j.name)), el('td', { text: j.share || '' }),
        el('td', {}, statusBadge(j.status), j.reason ? el('div', { class: 'muted waiting-for', text: reasonText(j.reason) }) : null),
        el('td', { class: 'holding-cell' }, holdingCell(j.holding)),
        el('td', { class: 'num', text: j.priority }), el('td', { class: 'num', text: j.preemptions || '' }),
        el('td', { class: 'muted', text: ago(j.startedAt) })))));
  }

  // holdingCell says whose capacity a running job holds: "own", "from
  // QS2", "own + spare", with a badge for each lender that will take its
  // capacity back.
  function holdingCell(h) {
    if (!h) return '—';
    const parts = h.own.length ? ['own'] : [];
    const lenders = [...new Set(h.borrowed.map((l) => l.lender))];
    parts.push(...lenders.map((l) => l === '' ? 'spare' : l));
    const text = (h.own.length || !lenders.length ? '' : 'from ') + parts.join(' + ');
    const reclaim = [...new Set(h.borrowed.filter((l) => l.reclaimable).map((l) => l.lender))];
    return [el('span', { class: 'holding-text', title: holdingTitle(h), text }),
      reclaim.map((l) => el('span', { class: 'reclaim-badge', 'data-reclaimer': l, title: l + ' has a waiting job that fits its limit: it takes its capacity back first from this job', text: 'reclaimable by ' + l }))];
  }

  function holdingTitle(h) {
    return h.own.map((o) => o.count + ' × ' + o.unit + ' own').concat(h.borrowed.map((l) => l.count + ' × ' + l.unit + ' borrowed from ' +
      (l.lender || 'spare capacity (beyond the share limits)') + (l.reclaimable ? ', reclaimable' : ''))).join(', ');
  }

  function queuePanel(q) {
    return el('section', { class: 'panel queue', 'data-queue': q.name },
      el('h2', {}, q.name, el('span', { class: 'badge' + (q.state === 'ENABLED' ? '' : ' off'), text: q.state })),
      envLine(q), legend(), sharesTable(q),
      el('h3', { text: 'Waiting, in scheduling order' }), el('div', { class: 'fronts' }, q.shares.map((sh) => front(q, sh))),
      el('h3', { text: 'Holding capacity' }), dispatchedTable(q));
  }

  function learnNames(st) {
    for (const q of st.queues) {
      for (const j of q.dispatched) names.set(j.id, j.name);
      for (const sh of q.shares) for (const j of sh.front) names.set(j.id, j.name);
    }
  }

  function eventItem(ev, fresh) {
    const d = ev.detail;
    names.set(d.jobId, d.jobName);
    return el('li', { 'data-job': d.jobId, 'data-status': d.status, class: fresh ? 'fresh' : '' },
      el('span', { class: 'muted', text: clock(Date.parse(ev.time)) }),
      el('span', {}, statusBadge(d.status)),
      el('span', {}, jobLink(d.jobId, d.jobName), d.quotaShareName ? el('span', { class: 'muted', text: ' in ' + d.quotaShareName }) : null,
        d.statusReason ? el('span', { class: 'reason', text: ' — ' + reasonText(d.statusReason) }) : null));
  }

  function overview() {
    document.title = 'sharq';
    const queues = el('div', { id: 'queues' });
    const evList = el('ul', { class: 'events', id: 'events' });
    main.replaceChildren(queues, el('section', { class: 'panel' }, el('h2', { text: 'Recent state changes' }), evList));
    let seen = 0;
    connect((st) => {
      learnNames(st);
      setCounts(st.counts);
      queues.replaceChildren(...(st.queues.length ? st.queues.map(queuePanel)
        : [el('section', { class: 'panel' }, el('p', { class: 'muted', text: 'No job queues yet. Create them through the AWS Batch API.' }))]));
      filterOwners();
      queues.dataset.version = String(++seen);
    }, (ev) => {
      // The server sends the latest events before the first state; only
      // those after it are news worth a flash.
      evList.prepend(eventItem(ev, seen > 0));
      while (evList.children.length > MAX_EVENTS) evList.lastChild.remove();
    });
  }

  // ---- a job's page

  function jobPage(id) {
    const head = el('div', { class: 'panel', id: 'job-head' });
    const actions = jobActions(id, () => refresh());
    const timeline = el('section', { class: 'panel', id: 'timeline' });
    const logs = el('section', { class: 'panel', id: 'logs' });
    main.replaceChildren(el('p', {}, el('a', { href: '/', text: '← all shares' })), head, actions.node, timeline, logs);
    let job = null;
    let pending = false;
    async function refresh() {
      if (pending) return;
      pending = true;
      try {
        const d = await api('GET', '/sharq/v1/console/jobs/' + encodeURIComponent(id));
        job = d.job;
        renderHead(head, d);
        actions.update(d.job);
        renderTimeline(timeline, d);
        logsFollower.kick(d.job);
      } catch (e) {
        head.replaceChildren(el('h2', { text: 'Job ' + id }), el('p', { class: 'msg err', text: e.message }));
        // Nothing to change or show of a job that does not exist.
        if (e.status === 404) for (const n of [actions.node, timeline, logs]) n.remove();
      } finally {
        pending = false;
      }
    }
    const logsFollower = followLogs(id, logs);
    refresh();
    connect((st) => { learnNames(st); setCounts(st.counts); refresh(); }, (ev) => {
      names.set(ev.detail.jobId, ev.detail.jobName);
      if (job && ev.detail.jobId === job.jobId) refresh();
    });
  }

  function renderHead(box, d) {
    const j = d.job;
    document.title = j.jobName + ' · sharq';
    names.set(j.jobId, j.jobName);
    const kv = [
      ['job ID', el('span', { class: 'mono', text: j.jobId })],
      ['queue', (j.jobQueue || '').replace(/.*job-queue\//, '')],
      ['quota share', j.quotaShareName || '—'],
      ['priority', el('span', { id: 'job-priority', text: j.schedulingPriority })],
      ['submitted', stamp(j.createdAt)],
      ['started', stamp(j.startedAt)],
      ['stopped', stamp(j.stoppedAt)],
      ['capacity', (j.capacityUsage || []).map((c) => c.quantity + ' × ' + c.capacityUnit).join(', ') || '—'],
      ['preempted', times(j.preemptionSummary ? j.preemptionSummary.preemptedAttemptCount : 0)],
    ].filter(([, v]) => v !== '');
    if (d.position) kv.push(['place in share', el('span', { id: 'job-position', text: '#' + d.position })]);
    if (d.position) kv.push(['expected start', el('span', { id: 'job-eta', class: 'eta ' + (d.eta ? d.eta.kind.toLowerCase() : 'pending'), text: etaLong(d.eta) })]);
    const reason = d.reason || j.statusReason;
    if (reason) kv.push([j.status === 'RUNNABLE' ? 'waiting because' : 'reason', el('span', { class: d.misconfigured ? 'msg err' : '', text: reasonText(reason) })]);
    if (d.holding) kv.push(['runs on', el('span', { id: 'job-holding' }, holdingCell(d.holding), ' ', el('span', { class: 'muted', text: holdingTitle(d.holding) }))]);
    if (d.model) kv.push(['model', el('span', { id: 'job-model', class: 'mono', text: d.model })]);
    if (d.checkpoints) kv.push(['checkpoints', el('span', { id: 'job-checkpoints', class: 'mono', text: d.checkpoints })]);
    box.replaceChildren(
      el('div', { class: 'job-head' }, el('h2', { class: 'job-title', text: j.jobName }, el('span', { class: 'short-id', text: ' (' + shortID(j.jobId) + ')' })),
        el('span', { id: 'job-status' }, statusBadge(j.status)),
        j.isTerminated ? el('span', { class: 'badge off', text: 'terminated' }) : null),
      el('dl', { class: 'kv' }, kv.map(([k, v]) => [el('dt', { text: k }), el('dd', {}, v)])));
  }

  // jobActions builds the priority and terminate controls once, so that a
  // redraw never eats what the user is typing.
  function jobActions(id, changed) {
    const input = el('input', { id: 'priority-input', type: 'number', min: 0, max: 9999, step: 1 });
    const msg = el('span', { class: 'msg', id: 'action-msg' });
    const say = (text, err) => { msg.textContent = text; msg.className = 'msg' + (err ? ' err' : ''); };
    const set = el('button', { id: 'priority-set', type: 'button', text: 'Set priority' });
    const term = el('button', { id: 'terminate', type: 'button', class: 'danger', text: 'Terminate…' });
    let armed = null;
    set.addEventListener('click', async () => {
      const n = Number(input.value);
      if (input.value === '' || !Number.isInteger(n) || n < 0 || n > 9999) { say('Priority is a whole number from 0 to 9999.', true); return; }
      set.disabled = true;
      try {
        const j = await api('POST', '/sharq/v1/jobs/' + encodeURIComponent(id) + '/priority', { schedulingPriority: n });
        say('Priority set to ' + j.schedulingPriority + '.');
        input.dataset.touched = '';
        changed();
      } catch (e) { say(e.message, true); } finally { set.disabled = false; }
    });
    // Terminating takes two clicks: the first arms the button for a few
    // seconds. A modal confirm() would block the page's updates.
    term.addEventListener('click', async () => {
      if (!armed) {
        term.classList.add('armed');
        term.textContent = 'Click again to terminate';
        armed = setTimeout(() => { armed = null; term.classList.remove('armed'); term.textContent = 'Terminate…'; }, 4000);
        return;
      }
      clearTimeout(armed);
      armed = null;
      term.classList.remove('armed');
      term.textContent = 'Terminate…';
      term.disabled = true;
      try {
        await api('POST', '/sharq/v1/jobs/' + encodeURIComponent(id) + '/terminate', { reason: 'Terminated from the sharq console' });
        say('Terminated.');
        changed();
      } catch (e) { say(e.message, true); term.disabled = false; }
    });
    input.addEventListener('input', () => { input.dataset.touched = '1'; });
    const node = el('section', { class: 'panel', id: 'job-actions' }, el('h3', { text: 'Change' }),
      el('div', { class: 'actions' }, el('label', { for: 'priority-input', text: 'Scheduling priority' }), input, set, term, msg));
    return {
      node,
      update(j) {
        if (!input.dataset.touched) input.value = j.schedulingPriority;
        const over = TERMINAL.has(j.status);
        set.disabled = over;
        input.disabled = over;
        term.disabled = over;
      },
    };
  }

  // renderTimeline shows the job's state changes, attempts and
  // preemptions, oldest first.
  function renderTimeline(box, d) {
    const j = d.job;
    const items = [el('li', {}, el('span', { class: 'when', text: stamp(j.createdAt) }), 'submitted')];
    let attempt = 0;
    for (const ev of d.events) {
      const e = ev.detail;
      const preempted = /^Preempted/.test(e.statusReason || '');
      if (e.status === 'SCHEDULED') attempt++;
      items.push(el('li', { class: e.status + (preempted ? ' preempted' : ''), 'data-status': e.status },
        el('span', { class: 'when', text: stamp(Date.parse(ev.time)) }), statusBadge(e.status),
        e.status === 'SCHEDULED' ? el('span', { class: 'muted', text: ' attempt ' + attempt }) : null,
        e.statusReason ? el('span', { class: 'why', text: reasonText(e.statusReason) }) : null));
    }
    // Where each attempt's instances run, when the executor tells (the
    // kube executor's pods and their nodes).
    const pods = d.instances || [];
    const showPods = pods.some((l) => l && l.length);
    const attempts = (j.attempts || []).map((a, i) => el('tr', {},
      el('td', { class: 'num', text: i + 1 }),
      el('td', { class: 'mono', text: (a.serviceResourceId && a.serviceResourceId.value || '').replace(/.*training-job\//, '') }),
      el('td', { text: stamp(a.startedAt) }), el('td', { text: stamp(a.stoppedAt) }),
      el('td', { class: 'muted', text: reasonText(a.statusReason || '') }),
      showPods ? el('td', {}, instanceList(pods[i])) : null));
    const heads = ['#', 'training job', 'started', 'stopped', 'reason'].concat(showPods ? ['pods'] : []);
    box.replaceChildren(el('h3', { text: 'Timeline' }), el('ol', { class: 'timeline' }, items),
      el('h3', { text: 'Attempts' }),
      attempts.length ? el('table', { id: 'attempts' }, el('thead', {}, el('tr', {}, heads.map((h) => el('th', { text: h })))),
        el('tbody', {}, attempts)) : el('p', { class: 'muted', text: 'No attempt yet.' }));
  }

  // instanceList shows an attempt's instances: pod, node and phase.
  function instanceList(list) {
    if (!list || !list.length) return el('span', { class: 'muted', text: '—' });
    return el('ul', { class: 'pods' }, list.map((p) => el('li', { 'data-host': p.host, 'data-node': p.node || '' },
      el('span', { class: 'mono', text: p.name || p.host + ': no pod' }),
      p.name ? [' on ', el('span', { class: 'mono node', text: p.node || 'no node yet' })] : null,
      p.phase ? el('span', { class: 'muted', text: ' ' + p.phase }) : null)));
  }

  // followLogs shows the latest attempt's output from the server's logs
  // route, asking for what is new every few seconds while the job lives.
  function followLogs(id, box) {
    const out = el('pre', { class: 'log', id: 'log-out' });
    const note = el('p', { class: 'muted', id: 'log-note', text: 'Loading…' });
    box.replaceChildren(el('h3', { text: 'Logs (latest attempt, stdout)' }), note);
    let attempt = 0;
    let offset = 0;
    let timer = null;
    let status = '';
    let stopped = false;
    async function poll() {
      timer = null;
      let resp;
      try {
        const q = new URLSearchParams({ offset: String(offset) });
        if (attempt) q.set('attempt', String(attempt));
        resp = await send('GET', '/sharq/v1/jobs/' + encodeURIComponent(id) + '/logs?' + q);
      } catch (_) { schedule(); return; }
      if (!resp.ok) {
        stopped = true;
        let m = resp.status === 501 ? 'This server\'s executor keeps no job logs.' : 'No logs.';
        try { const b = await resp.json(); if (b && b.message) m = b.message; } catch (_) { /* not JSON */ }
        note.textContent = m;
        return;
      }
      const n = Number(resp.headers.get('Sharq-Attempts') || 0);
      const a = Number(resp.headers.get('Sharq-Attempt') || 0);
      if (!attempt && a) attempt = a;
      const text = await resp.text();
      if (text) {
        if (!out.isConnected) box.replaceChildren(box.firstChild, out);
        out.append(text);
        out.scrollTop = out.scrollHeight;
      } else if (!out.isConnected) {
        note.textContent = a ? 'Nothing written yet.' : 'The job has not started yet.';
      }
      offset = Number(resp.headers.get('Sharq-Next-Offset') || offset);
      if (n > attempt && attempt) { attempt = n; offset = 0; out.append('\n--- attempt ' + n + ' ---\n'); }
      schedule();
    }
    function schedule() {
      if (stopped || TERMINAL.has(status) || timer) return;
      timer = setTimeout(poll, 3000);
    }
    let started = false;
    return {
      kick(j) {
        const was = status;
        status = j.status;
        if (!started) { started = true; poll(); }
        else if (TERMINAL.has(status) && !TERMINAL.has(was) && !stopped && !timer) poll(); // the last bytes
        else schedule();
      },
    };
  }


  // ---- usage history

  const SVG = 'http://www.w3.org/2000/svg';
  const USAGE_STACK = ['own', 'borrowed', 'lent'];

  // svg builds an SVG element as el builds HTML ones.
  function svg(tag, attrs, ...kids) {
    const n = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs || {})) if (v !== undefined && v !== null) n.setAttribute(k, String(v));
    for (const kid of kids.flat(Infinity)) if (kid !== undefined && kid !== null) n.append(kid instanceof Node ? kid : document.createTextNode(String(kid)));
    return n;
  }

  // periodMs reads 90m, 12h, 7d as milliseconds.
  function periodMs(s) {
    const m = /^(\d+)([mhdw])$/.exec(s || '');
    if (!m) return 0;
    return Number(m[1]) * { m: 60e3, h: 3600e3, d: 86400e3, w: 7 * 86400e3 }[m[2]];
  }

  function usageSelect(name, value, options, onchange) {
    return el('label', {}, el('select', { name, onchange },
      options.map(([v, text]) => el('option', { value: v, selected: v === value, text }))));
  }

  // usagePage shows what each share (share identifier, owner, queue) used
  // over a period, as a chart of stacked columns per bucket (own, borrowed,
  // lent) on one scale for all, and the period's totals, preempted
  // included. The period, grouping and measure are in the page's URL.
  function usagePage() {
    document.title = 'sharq usage';
    const params = new URLSearchParams(location.search);
    const st = { since: params.get('since') || '7d', by: params.get('by') || 'share', measure: params.get('measure') || 'gpu' };
    if (!periodMs(st.since)) st.since = '7d';
    const box = el('div', { id: 'usage' });
    const change = (e) => {
      st[e.target.name] = e.target.value;
      history.replaceState(null, '', '/usage?' + new URLSearchParams(st));
      load();
    };
    const periods = [['1h', 'last hour'], ['1d', 'last day'], ['7d', 'last 7 days'], ['30d', 'last 30 days'], ['90d', 'last 90 days']];
    if (!periods.some(([v]) => v === st.since)) periods.unshift([st.since, 'last ' + st.since]);
    const controls = el('div', { class: 'panel usage-controls', id: 'usage-controls' },
      usageSelect('since', st.since, periods, change),
      usageSelect('by', st.by, [['share', 'by quota share'], ['share-id', 'by share identifier'], ['owner', 'by owner'], ['queue', 'by queue']], change),
      usageSelect('measure', st.measure, [['gpu', 'GPU-hours'], ['instance', 'instance-hours']], change));
    main.replaceChildren(el('p', {}, el('a', { href: '/', text: '← all shares' })), controls, box);
    let seq = 0;
    let timer = null;
    // load reads the report, and again every 30 s: the attempts still
    // running add to it.
    async function load() {
      const mine = ++seq;
      clearTimeout(timer);
      const every = Math.max(60e3, Math.round(periodMs(st.since) / 24));
      try {
        const rep = await api('GET', '/sharq/v1/usage?' + new URLSearchParams({ since: st.since, by: st.by, every: every + 'ms' }));
        if (mine === seq) { renderUsage(box, rep, st.measure); setConn('live', 'as of ' + clock(rep.to)); }
      } catch (e) {
        if (mine === seq) { box.replaceChildren(el('section', { class: 'panel' }, el('p', { class: 'msg err', text: e.message }))); setConn('down', 'not read'); }
      }
      if (mine === seq) timer = setTimeout(load, 30e3);
    }
    load();
  }

  // perText says a bucket's length: "1 d", "6 h", "2.5 min".
  function perText(ms) {
    if (ms % 86400e3 === 0) return ms / 86400e3 + ' d';
    if (ms % 3600e3 === 0) return ms / 3600e3 + ' h';
    return +(ms / 60e3).toFixed(1) + ' min';
  }

  // usageName names a group; an owner by its user name, as the CLI does.
  function usageName(by, key) {
    if (key && by === 'owner' && key.includes(':user/')) return key.slice(key.lastIndexOf(':user/') + 6);
    if (key) return key;
    return by === 'share' ? '(fifo)' : by === 'owner' ? '(unsigned)' : '(none)';
  }

  function renderUsage(box, rep, measure) {
    const hours = (r) => (measure === 'gpu' ? r.gpuSeconds : r.instanceSeconds) / 3600;
    const unit = measure === 'gpu' ? 'GPU-hours' : 'instance-hours';
    const n = Math.max(1, Math.ceil((rep.to - rep.from) / rep.every));
    const groups = new Map();
    for (const r of rep.rows) {
      const id = (r.queue || '') + '\u0000' + r.key;
      if (!groups.has(id)) groups.set(id, { queue: r.queue, key: r.key, cols: Array.from({ length: n }, () => ({})), totals: new Map() });
      const g = groups.get(id);
      const b = Math.floor((r.from - rep.from) / rep.every);
      if (USAGE_STACK.includes(r.kind)) g.cols[b][r.kind] = (g.cols[b][r.kind] || 0) + hours(r);
      const t = r.kind + '\u0000' + (r.peer || '');
      g.totals.set(t, { kind: r.kind, peer: r.peer, h: (g.totals.has(t) ? g.totals.get(t).h : 0) + hours(r) });
    }
    box.dataset.rows = String(rep.rows.length);
    if (!groups.size) {
      box.replaceChildren(el('section', { class: 'panel' }, el('p', { class: 'muted', text: 'No capacity was used from ' + stamp(rep.from) + ' to ' + stamp(rep.to) + '.' })));
      return;
    }
    let top = 0;
    for (const g of groups.values()) for (const c of g.cols) top = Math.max(top, USAGE_STACK.reduce((s, k) => s + (c[k] || 0), 0));
    const legendBox = el('div', { class: 'legend' }, USAGE_STACK.map((k) => el('span', {}, el('i', { class: k }), k)),
      el('span', { class: 'muted', text: unit + ' per ' + perText(rep.every) +
        ', ' + stamp(rep.from) + ' to ' + stamp(rep.to) }));
    box.replaceChildren(el('section', { class: 'panel' }, legendBox),
      ...[...groups.values()].map((g) => usageGroup(rep, g, n, top, unit)));
    box.dataset.version = String((Number(box.dataset.version) || 0) + 1);
  }

  // fmtHours writes hours; less than a minute's worth in seconds.
  function fmtHours(h) {
    if (h > 0 && h < 1 / 60) return +(h * 3600).toFixed(h * 3600 < 1 ? 3 : 1) + ' s';
    return h >= 100 ? h.toFixed(0) : h >= 1 ? h.toFixed(1) : h.toFixed(3);
  }

  function usageGroup(rep, g, n, top, unit) {
    const W = 720, H = 120, pad = 2;
    const w = W / n;
    const chart = svg('svg', { class: 'usage-chart', viewBox: '0 0 ' + W + ' ' + (H + 16), width: '100%', role: 'img',
      'aria-label': usageName(rep.by, g.key) + ' ' + unit + ' over time' });
    chart.append(svg('line', { class: 'axis', x1: 0, y1: H, x2: W, y2: H }));
    g.cols.forEach((c, i) => {
      let y = H;
      for (const k of USAGE_STACK) {
        const v = c[k] || 0;
        if (!v || !top) continue;
        const h = Math.max(1, (H - pad) * v / top);
        y -= h;
        chart.append(svg('rect', { class: 'col ' + k, x: i * w + 0.5, y, width: Math.max(1, w - 1), height: h, 'data-kind': k, 'data-bucket': i, 'data-hours': v },
          svg('title', {}, stamp(rep.from + i * rep.every) + ': ' + fmtHours(v) + ' ' + unit + ' ' + k)));
      }
    });
    chart.append(svg('text', { class: 'tick', x: 0, y: H + 13 }, stamp(rep.from)),
      svg('text', { class: 'tick', x: W, y: H + 13, 'text-anchor': 'end' }, stamp(rep.to)));
    const order = ['own', 'borrowed', 'lent', 'preempted'];
    const totals = [...g.totals.values()].sort((a, b) => order.indexOf(a.kind) - order.indexOf(b.kind) || (a.peer || '').localeCompare(b.peer || ''));
    const rows = totals.map((t) => el('tr', { 'data-kind': t.kind, 'data-peer': t.peer || '' },
      el('td', {}, el('i', { class: 'swatch ' + t.kind }), t.kind),
      el('td', { text: t.kind === 'borrowed' ? 'from ' + (t.peer || 'spare capacity') : t.kind === 'lent' ? 'to ' + t.peer : t.kind === 'preempted' ? 'held by attempts later preempted' : '' }),
      el('td', { class: 'num', text: fmtHours(t.h) })));
    const title = usageName(rep.by, g.key) + (g.queue && rep.by !== 'queue' ? ' · ' + g.queue : '');
    return el('section', { class: 'panel usage-group', 'data-key': g.key, 'data-queue': g.queue || '' },
      el('h2', { text: title }), chart,
      el('table', { class: 'usage-totals' }, el('thead', {}, el('tr', {}, el('th', { text: 'kind' }), el('th', { text: 'with' }), el('th', { class: 'num', text: unit }))),
        el('tbody', {}, rows)));
  }

  authControl();
  const m = location.pathname.match(/^\/jobs\/([^/]+)$/);
  if (m) jobPage(decodeURIComponent(m[1]));
  else if (location.pathname === '/usage') usagePage();
  else overview();
})();
