/* gsched web dashboard (docs/dashboard.md): vanilla JavaScript, no framework, nothing from the
 * internet.  Every datum comes from this daemon's /v1 API; the token the user enters stays in
 * this tab (sessionStorage['gsched.token']) and is sent only as an Authorization header by
 * fetch() (no cookie, never in a URL).  State-changing calls carry X-Gsched-Client, which the
 * daemon requires of them.  Text from the API is only ever set as text (textContent,
 * attributes), never parsed as HTML.  The DOM hooks listed in docs/dashboard.md are a stable
 * contract for the browser tests. */
'use strict';
(function () {
  const TOKEN_KEY = 'gsched.token';
  const POLL_MS = 5000;        /* without an event stream: re-read the page's data */
  const STREAM_POLL_MS = 15000; /* with one connected: a slow safety re-read (others' jobs) */
  const S = {
    health: null, routes: new Set(), me: null, page: '', arg: '', gen: 0,
    timer: null, stream: null, lastEventId: '', debounce: null, colorBy: 'job',
    range: 3600, loading: false, live: false, lastLoad: 0,
    pointerDown: false, acting: 0, deferred: false, again: false,
  };

  /* ---- helpers ------------------------------------------------------------------------------ */
  const $ = (sel, root) => (root || document).querySelector(sel);
  function el(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    for (const k in attrs || {}) {
      const v = attrs[k];
      if (v === null || v === undefined || v === false) continue;
      if (k === 'text') e.textContent = v;
      else if (k === 'cls') e.className = v;
      else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
      else if (k.startsWith('data-') || k === 'title' || k === 'href' || k === 'id' ||
               k === 'type' || k === 'hidden' || k === 'value' || k === 'for' || k === 'colspan' ||
               k === 'accept' || k === 'sandbox' || k === 'placeholder' || k === 'role')
        e.setAttribute(k, v === true ? '' : String(v));
      else e[k] = v;
    }
    for (const k of kids.flat()) if (k !== null && k !== undefined && k !== false)
      e.append(k instanceof Node ? k : document.createTextNode(String(k)));
    return e;
  }
  const SVGNS = 'http://www.w3.org/2000/svg';
  function sv(tag, attrs, text) {
    const e = document.createElementNS(SVGNS, tag);
    for (const k in attrs || {}) e.setAttribute(k, String(attrs[k]));
    if (text !== undefined) e.textContent = String(text);
    return e;
  }
  function hashStr(s) {
    let h = 2166136261;
    for (let i = 0; i < s.length; i++) { h ^= s.charCodeAt(i); h = Math.imul(h, 16777619); }
    return h >>> 0;
  }
  /* A stable colour per job id (the same job, the same colour, on every node and page). */
  function jobColor(id) {
    const h = Math.round((Number(id) * 137.508) % 360);
    const l = [46, 56, 38][Number(id) % 3];
    return `hsl(${h}, 62%, ${l}%)`;
  }
  function vcColor(vc) {
    const x = hashStr(String(vc));
    return `hsl(${x % 360}, ${55 + (x >> 9) % 20}%, ${40 + (x >> 17) % 16}%)`;
  }
  /* [1,2,3,5,7,8] -> "1-3,5,7-8" */
  function ranges(v) {
    const a = v.slice().sort((x, y) => x - y), out = [];
    for (let i = 0; i < a.length;) {
      let k = i;
      while (k + 1 < a.length && a[k + 1] === a[k] + 1) k++;
      out.push(k > i ? `${a[i]}-${a[k]}` : String(a[i]));
      i = k + 1;
    }
    return out.join(',');
  }
  function swatch(color) {
    const s = el('span', { cls: 'sw' });
    s.style.background = color;
    return s;
  }
  const p2 = (x) => String(x).padStart(2, '0');
  function fmtTime(s) {
    if (!s) return '';
    const d = new Date(s);
    if (isNaN(d)) return String(s);
    return `${d.getFullYear()}-${p2(d.getMonth() + 1)}-${p2(d.getDate())} ${p2(d.getHours())}:${p2(d.getMinutes())}:${p2(d.getSeconds())}`;
  }
  function fmtDur(us) {
    if (us === null || us === undefined) return '';
    let s = Math.max(0, Math.round(us / 1e6));
    const d = Math.floor(s / 86400); s %= 86400;
    const h = Math.floor(s / 3600); s %= 3600;
    const m = Math.floor(s / 60); s %= 60;
    return (d ? d + '-' : '') + (d || h ? p2(h) + ':' : '') + p2(m) + ':' + p2(s);
  }
  function token() { try { return sessionStorage.getItem(TOKEN_KEY) || ''; } catch (e) { return ''; } }
  function setError(msg) { $('#error').textContent = msg || ''; }
  function flash(msg, bad) {
    const f = $('#flash');
    f.textContent = msg || '';
    f.classList.toggle('bad', !!bad);
  }

  class ApiError extends Error {
    constructor(status, msg, problem) { super(msg); this.status = status; this.problem = problem; }
  }
  /* One call of the daemon's API: JSON (or text) back, ApiError on a 4xx/5xx. */
  async function api(method, path, body, extraHeaders) {
    const h = Object.assign({ Accept: 'application/json' }, extraHeaders || {});
    const t = token();
    if (t) h.Authorization = 'Bearer ' + t;
    if (method !== 'GET' && method !== 'HEAD') h['X-Gsched-Client'] = 'dashboard';
    const opts = { method, headers: h, cache: 'no-store', credentials: 'omit', redirect: 'error' };
    if (body !== undefined) { h['Content-Type'] = 'application/json'; opts.body = JSON.stringify(body); }
    let r;
    try { r = await fetch(path, opts); } catch (e) {
      throw new ApiError(0, 'cannot reach the daemon: ' + e.message, null);
    }
    const ct = r.headers.get('Content-Type') || '';
    const data = ct.includes('json') ? await r.json().catch(() => null) : await r.text();
    if (!r.ok) {
      const msg = data && data.detail ? data.detail : `${r.status} ${r.statusText}`;
      throw new ApiError(r.status, `${method} ${path.split('?')[0]}: ${msg}`, data);
    }
    return { data, headers: r.headers, status: r.status };
  }
  const has = (method, pattern) => S.routes.has(method + ' ' + pattern);

  /* ---- start, sign-in ------------------------------------------------------------------------ */
  async function boot() {
    $('#login-form').addEventListener('submit', (ev) => {
      ev.preventDefault();
      const v = $('#token').value.trim();
      if (!v) return;
      try { sessionStorage.setItem(TOKEN_KEY, v); } catch (e) { /* private mode: kept nowhere */ }
      $('#token').value = '';
      signIn();
    });
    $('#logout').addEventListener('click', () => {
      try { sessionStorage.removeItem(TOKEN_KEY); } catch (e) { /* nothing kept */ }
      S.me = null;
      stopLive();
      showLogin('');
    });
    window.addEventListener('hashchange', () => route(true));
    /* a pointer down on the page holds refreshes until it is up again (load, renderLater) */
    const up = () => { S.pointerDown = false; renderLater(); };
    window.addEventListener('pointerdown', () => { S.pointerDown = true; }, true);
    window.addEventListener('pointerup', up, true);
    window.addEventListener('pointercancel', up, true);
    window.addEventListener('blur', up);
    /* a page kept in the back/forward cache keeps its open event stream, one of the browser's
     * 6 connections to this host (6 such pages and no request gets through): close it when the
     * page is hidden, and when the page is shown again from the cache, resume and re-read */
    window.addEventListener('pagehide', () => stopLive());
    window.addEventListener('pageshow', (ev) => { if (ev.persisted && S.me) { startLive(); route(false); } });
    try {
      S.health = (await api('GET', '/v1/health')).data;
      const idx = (await api('GET', '/v1')).data;
      for (const r of idx.routes || []) S.routes.add(r.method + ' ' + r.path);
    } catch (e) {
      setError(e.message);
      return;
    }
    signIn();
  }

  function showLogin(msg) {
    $('#login-box').hidden = false;
    $('#page').replaceChildren();
    $('#logout').hidden = true;
    $('#whoami').textContent = '';
    setError(msg);
    document.body.dataset.ready = '1';
    $('#token').focus();
  }

  async function signIn() {
    if (S.health && S.health.authentication && !token()) { showLogin(''); return; }
    try {
      const c = (await api('GET', '/v1/cluster')).data;
      S.me = { user: c.user, admin: !!c.admin };
    } catch (e) {
      if (e.status === 401) {
        try { sessionStorage.removeItem(TOKEN_KEY); } catch (x) { /* nothing kept */ }
        showLogin(e.message);
      } else setError(e.message);
      return;
    }
    $('#login-box').hidden = true;
    $('#logout').hidden = !(S.health && S.health.authentication);
    $('#whoami').textContent = S.me.user + (S.me.admin ? ' (admin)' : '');
    setError('');
    startLive();
    route(true);
  }

  /* ---- routing ------------------------------------------------------------------------------- */
  const PAGES = {};
  function route(nav) {
    if (!S.me) return;
    const m = /^#\/([a-z]+)(?:\/(.*))?$/.exec(location.hash || '');
    let page = m ? m[1] : 'cluster', arg = m && m[2] ? decodeURIComponent(m[2]) : '';
    if (!PAGES[page]) { page = 'cluster'; arg = ''; }
    if (nav) {
      S.page = page; S.arg = arg; S.gen++;
      document.body.dataset.ready = '0';
      document.body.dataset.page = page;
      flash('');
      closeConfirm();
      for (const a of document.querySelectorAll('#nav a'))
        a.classList.toggle('active', a.dataset.page === page || (page === 'job' && a.dataset.page === 'queue'));
      $('#page').replaceChildren(el('p', { cls: 'muted', text: 'Loading…' }));
    }
    load(nav);
  }

  /* A refresh must not rebuild the page under a click: between a mouse press and its release
   * (the release on a new button is no click) and while an action's call is in flight, a
   * refresh's render waits (S.deferred) and runs once the pointer is up and the action done. */
  const holdRender = () => S.pointerDown || S.acting > 0;
  function renderLater() {
    if (!S.deferred || holdRender()) return;
    S.deferred = false;
    setTimeout(() => { if (quietNow()) load(false); }, 0); /* after the release's click */
  }
  /* An action (a button's API call) in flight: refreshes wait for it, then one runs. */
  async function acting(fn) {
    S.acting++;
    try { return await fn(); } finally {
      S.acting--;
      S.deferred = true;
      renderLater();
    }
  }

  /* (Re)load the current page's data and render it; nav: a navigation (else a refresh). */
  async function load(nav) {
    const gen = S.gen;
    if (S.loading && !nav) { S.again = true; return; } /* once this load ends, another */
    S.loading = true;
    S.again = false;
    S.lastLoad = Date.now();
    try {
      const node = await PAGES[S.page](S.arg, nav);
      if (gen !== S.gen) return; /* navigated away meanwhile */
      if (!nav && holdRender()) { S.deferred = true; return; }
      if (node) {
        const y = window.scrollY;
        $('#page').replaceChildren(node);
        if (!nav) window.scrollTo(0, y);
      }
      setError('');
      document.body.dataset.ready = '1';
    } catch (e) {
      if (gen !== S.gen) return;
      if (e.status === 401) { showLogin(e.message); return; }
      setError(e.message || String(e));
      if (nav) $('#page').replaceChildren(el('p', { cls: 'muted', text: 'Could not load this page.' }));
      document.body.dataset.ready = '1';
    } finally {
      if (gen === S.gen) {
        S.loading = false;
        if (S.again) { S.again = false; setTimeout(() => { if (quietNow()) load(false); }, 0); }
      }
    }
  }

  /* ---- live updates -------------------------------------------------------------------------- */
  function setLive(mode, text) {
    const l = $('#live');
    l.dataset.mode = mode;
    $('#live-text').textContent = text;
    l.title = 'live updates: ' + text;
  }
  /* A background re-read replaces the page: not while a confirmation is open, the tab is
   * hidden, or the user is typing in one of the page's fields. */
  function quietNow() {
    const a = document.activeElement;
    const typing = a && $('#page').contains(a) && (a.tagName === 'INPUT' || a.tagName === 'SELECT' || a.tagName === 'TEXTAREA');
    return $('#confirm').hidden && document.visibilityState !== 'hidden' && !typing;
  }
  function refreshSoon() {
    clearTimeout(S.debounce);
    S.debounce = setTimeout(() => { if (quietNow()) load(false); }, 400);
  }
  function startLive() {
    stopLive();
    S.live = false;
    if (has('GET', '/v1/events')) stream();
    else setLive('poll', `polling every ${POLL_MS / 1000} s`);
    /* poll while no stream is connected (none on this daemon, or it broke: refused, restarted) */
    S.timer = setInterval(() => {
      const due = Date.now() - S.lastLoad >= (S.live ? STREAM_POLL_MS : POLL_MS) - 100;
      if (due && quietNow() && S.page !== 'report') load(false);
    }, POLL_MS);
  }
  function stopLive() {
    clearInterval(S.timer);
    S.timer = null;
    if (S.stream) { S.stream.abort(); S.stream = null; }
  }
  /* GET /v1/events read with fetch() (EventSource cannot send an Authorization header);
   * resumed with Last-Event-ID after a break; each event re-reads the page's data (debounced). */
  async function stream() {
    const ctl = new AbortController();
    S.stream = ctl;
    const h = { Accept: 'text/event-stream' };
    const t = token();
    if (t) h.Authorization = 'Bearer ' + t;
    if (S.lastEventId) h['Last-Event-ID'] = S.lastEventId;
    try {
      const r = await fetch('/v1/events', { headers: h, signal: ctl.signal, cache: 'no-store', credentials: 'omit' });
      if (!r.ok || !r.body) throw new Error('HTTP ' + r.status);
      S.live = true;
      setLive('stream', 'live');
      const rd = r.body.getReader();
      const dec = new TextDecoder();
      let buf = '';
      for (;;) {
        const { value, done } = await rd.read();
        if (done) break;
        buf += dec.decode(value, { stream: true });
        let i;
        while ((i = buf.search(/\r?\n\r?\n/)) >= 0) {
          const block = buf.slice(0, i);
          buf = buf.slice(buf[i] === '\r' ? i + 4 : i + 2);
          let type = 'message', id = null, sawData = false;
          for (const line of block.split(/\r?\n/)) {
            if (line.startsWith(':')) continue;
            const c = line.indexOf(':');
            const f = c < 0 ? line : line.slice(0, c);
            const v = c < 0 ? '' : line.slice(c + 1).replace(/^ /, '');
            if (f === 'id') id = v;
            else if (f === 'event') type = v;
            else if (f === 'data') sawData = true;
          }
          if (id !== null) S.lastEventId = id;
          if (sawData || type === 'reset') refreshSoon();
        }
      }
    } catch (e) {
      if (ctl.signal.aborted) return;
    }
    if (S.stream !== ctl) return;
    S.live = false;
    setLive('poll', 'reconnecting…');
    setTimeout(() => { if (S.stream === ctl) stream(); }, 3000);
  }

  /* ---- in-page confirmation (no window.confirm: tests click button[data-confirm]) ------------ */
  function closeConfirm() { const c = $('#confirm'); c.hidden = true; c.replaceChildren(); }
  function ask(text, label, withReason, run) {
    const c = $('#confirm');
    const reason = withReason ? el('input', { id: 'node-reason', type: 'text', placeholder: 'reason (shown to users)' }) : null;
    const yes = el('button', { cls: 'primary', type: 'button', 'data-confirm': '1', text: label });
    const no = el('button', { type: 'button', 'data-cancel': '1', text: 'Back', onclick: closeConfirm });
    yes.addEventListener('click', async () => {
      yes.disabled = true;
      const why = reason ? reason.value.trim() : '';
      closeConfirm();
      await run(why);
    });
    c.replaceChildren(el('div', { cls: 'dlg', role: 'dialog' }, el('p', { text }), reason, el('div', { cls: 'row' }, no, yes)));
    c.hidden = false;
    (reason || yes).focus();
  }

  /* ---- cluster map --------------------------------------------------------------------------- */
  function uiState(st) {
    /* the API's node states -> the map's: up | drained | draining | down | bad */
    return st === 'drained' || st === 'draining' || st === 'down' || st === 'bad' ? st : 'up';
  }
  function gpuTitle(node, g) {
    let t = `${node}:${g.local} ${g.type} (GPU ${g.index}) ${g.state}`;
    if (g.health_reason) t += `: ${g.health_reason}`;
    if (g.job !== null && g.job !== undefined)
      t = `job ${g.job}${g.job_name ? ' (' + g.job_name + ')' : ''}\nuser ${g.user || '?'}\nVC ${g.vc || '?'}\n` + t;
    return t;
  }
  PAGES.cluster = async function () {
    const c = (await api('GET', '/v1/cluster')).data;
    S.me = { user: c.user, admin: !!c.admin };
    const jobs = new Map();
    const nodeActs = S.me.admin && has('POST', '/v1/nodes/{name}/drain');
    function gpuEl(node, g) {
      const d = el('div', {
        cls: 'gpu', 'data-node': node, 'data-gpu': g.local, 'data-index': g.index,
        'data-job': g.job === null || g.job === undefined ? '' : g.job, 'data-vc': g.vc || '',
        'data-user': g.user || '', 'data-gstate': g.state, title: gpuTitle(node, g), text: g.local,
      });
      if (g.job !== null && g.job !== undefined) {
        d.classList.add('used');
        d.style.background = S.colorBy === 'vc' ? vcColor(g.vc || '') : jobColor(g.job);
        const j = jobs.get(g.job) || { id: g.job, name: g.job_name, user: g.user, vc: g.vc, gpus: 0 };
        j.gpus++;
        jobs.set(g.job, j);
      } else if (g.state === 'allocated') {
        d.classList.add('hidden-job');
        d.title = gpuTitle(node, g) + ' (a job you may not see)';
      } else if (g.state !== 'idle') d.classList.add('off');
      d.addEventListener('click', () => { if (g.job !== null && g.job !== undefined) location.hash = '#/job/' + g.job; });
      return d;
    }
    function inner(node, cells) {
      const box = el('div', { cls: 'gpus' });
      for (const k of cells) {
        if (k.kind === 'gpu') box.append(gpuEl(node, k));
        else {
          const cls = k.kind === 'pcie' ? 'switch' : 'socket';
          const g = inner(node, k.children || []);
          g.className = cls;
          g.setAttribute('data-' + cls, k.name);
          g.title = `${k.kind} ${k.name}`;
          box.append(g);
        }
      }
      return box;
    }
    function nodeEl(n) {
      const st = uiState(n.state);
      /* an admin's drain or down says who and why; else the node's own reason (bad mark,
       * cluster manager, executor) */
      const why = n.admin_state
        ? `${n.admin_state === 'drain' ? 'drained' : 'down'}${n.admin_by ? ' by ' + n.admin_by : ''}${n.admin_reason ? ': ' + n.admin_reason : ''}`
        : n.reason;
      const card = el('div', {
        cls: 'node', 'data-node': n.name, 'data-state': st, 'data-api-state': n.state,
        title: why || `${n.name}: ${n.state}`, 'data-chain': n.chain || null,
        'data-admin': n.admin_state || null,
      },
      el('div', { cls: 'head' }, el('span', { cls: 'name', text: n.name }),
        el('span', { cls: 'st', text: `${n.state} · ${n.allocated}/${n.gpus}` })),
      why ? el('div', { cls: 'why', text: why, title: why }) : null,
      inner(n.name, n.children || []));
      if (nodeActs) {
        const acts = el('div', { cls: 'acts' });
        /* what applies: in service: drain, down; drained: resume, down; down: resume */
        const can = !n.admin_state ? ['drain', 'down'] : n.admin_state === 'drain' ? ['resume', 'down'] : ['resume'];
        for (const a of can)
          acts.append(el('button', {
            type: 'button', 'data-action': a, 'data-node': n.name, text: a,
            onclick: () => ask(`${a} node ${n.name}?`, `${a} ${n.name}`, true, (why) => acting(async () => {
              try {
                await api('POST', `/v1/nodes/${encodeURIComponent(n.name)}/${a}`, why ? { reason: why } : undefined);
                flash(`node ${n.name}: ${{ drain: 'drained (its jobs finish, no new job starts)', resume: 'back in service', down: 'taken down (its jobs are requeued)' }[a]}`);
              } catch (e) { flash(e.message, true); }
            })),
          }));
        card.append(acts);
      }
      return card;
    }
    function rackEl(name, nodes) {
      return el('div', { cls: 'rack', 'data-rack': name },
        el('div', { cls: 'label', text: name ? `rack ${name}` : 'nodes' }),
        el('div', { cls: 'nodes' }, nodes.map(nodeEl)));
    }
    function level(cells) {
      /* racks (and pools) as they are; nodes straight under a pool or the root: one rack "" */
      const out = [], loose = [];
      for (const k of cells) {
        if (k.kind === 'node') loose.push(k);
        else if (k.kind === 'rack') {
          const nodes = [], extra = [];
          for (const x of k.children || []) (x.kind === 'node' ? nodes : extra).push(x);
          out.push(rackEl(k.name, nodes));
          out.push(...level(extra));
        } else if (k.kind !== 'gpu') {
          out.push(el('div', { cls: 'pool', 'data-pool': k.name },
            el('div', { cls: 'label', text: `${k.kind} ${k.name}` }), level(k.children || [])));
        }
      }
      if (loose.length) out.unshift(rackEl('', loose));
      return out;
    }
    const map = el('div', { id: 'cluster-map' }, level(c.tree.children || []));
    /* nodes out of service, counted by the map's state (a draining node is not down) */
    const byState = new Map();
    (function count(cells) {
      for (const k of cells) {
        if (k.kind === 'node') {
          const st = uiState(k.state);
          if (st !== 'up') byState.set(st, (byState.get(st) || 0) + 1);
        } else if (k.kind !== 'gpu') count(k.children || []);
      }
    })(c.tree.children || []);
    const offStats = ['draining', 'drained', 'down', 'bad'].filter((st) => byState.get(st)).map((st) =>
      el('span', { cls: 'stat', 'data-nodes': st }, el('b', { text: byState.get(st) }), ` node${byState.get(st) > 1 ? 's' : ''} ${st}`));
    const sel = el('select', { id: 'color-by', onchange: (e) => { S.colorBy = e.target.value; load(false); } },
      el('option', { value: 'job', text: 'job' }), el('option', { value: 'vc', text: 'VC' }));
    sel.value = S.colorBy;
    const legend = el('div', { cls: 'legend', id: 'legend' });
    const list = [...jobs.values()].sort((a, b) => a.id - b.id);
    if (S.colorBy === 'vc') {
      const vcs = new Map();
      for (const j of list) vcs.set(j.vc || '', (vcs.get(j.vc || '') || 0) + j.gpus);
      for (const [vc, n] of vcs)
        legend.append(el('span', { 'data-vc': vc }, swatch(vcColor(vc)), `${vc} · ${n} GPU${n > 1 ? 's' : ''}`));
    } else {
      for (const j of list.slice(0, 60)) {
        legend.append(el('a', { href: '#/job/' + j.id, 'data-job': j.id, title: `user ${j.user} · VC ${j.vc}` },
          swatch(jobColor(j.id)), `job ${j.id}${j.name ? ' ' + j.name : ''} · ${j.gpus} GPU${j.gpus > 1 ? 's' : ''}`));
      }
      if (list.length > 60) legend.append(el('span', { cls: 'muted', text: `… ${list.length - 60} more` }));
    }
    if (!list.length) legend.append(el('span', { cls: 'muted', text: 'no job you may see holds GPUs' }));
    /* the cells that are no job's colour */
    const key = (k, cls, text) => el('span', { cls: 'key', 'data-key': k }, el('span', { cls: 'sw gpu-key ' + cls }), text);
    if (map.querySelector('.gpu.hidden-job')) legend.append(key('hidden', 'hidden-job', 'other users\' jobs'));
    legend.append(key('free', 'free', 'free'));
    if (map.querySelector('.gpu.off')) legend.append(key('off', 'off', 'unavailable (drained, down, bad)'));
    return el('div', null,
      el('div', { cls: 'toolbar' },
        el('span', { cls: 'stat' }, el('b', { text: c.gpus.allocated }), ` / ${c.gpus.total} GPUs allocated`),
        el('span', { cls: 'stat' }, el('b', { text: c.gpus.free }), ' free'),
        c.gpus.down ? el('span', { cls: 'stat', 'data-gpus': 'unavailable', title: 'GPUs neither free nor allocated: on nodes drained, down or bad, or marked bad' },
          el('b', { text: c.gpus.down }), ' unavailable') : null,
        el('span', { cls: 'stat' }, el('b', { text: c.nodes }), c.nodes === 1 ? ' node' : ' nodes'),
        offStats,
        el('label', null, 'Colour by ', sel)),
      el('div', { cls: 'card' }, legend),
      map);
  };

  /* ---- queue --------------------------------------------------------------------------------- */
  const STATE_ORDER = { PENDING: 0, RUNNING: 1, DRAINING: 2, PREEMPTED: 3, SUSPENDED: 4 };
  PAGES.queue = async function () {
    const r = (await api('GET', '/v1/jobs?state=active&limit=10000&compact=1')).data;
    const jobs = (r.jobs || []).slice();
    /* the API's queue order: position ascending, jobs without one after */
    jobs.sort((a, b) => {
      const pa = a.position ?? Infinity, pb = b.position ?? Infinity;
      if (pa !== pb) return pa - pb;
      const sa = STATE_ORDER[a.state] ?? 9, sb = STATE_ORDER[b.state] ?? 9;
      return sa !== sb ? sa - sb : a.id - b.id;
    });
    const now = Date.now() * 1000;
    const tb = el('tbody');
    /* pending elements of a job array next to each other in the queue: one row, 123_[4-99]
     * (like squeue), unless #expand-arrays */
    const rows = [];
    for (const j of jobs) {
      const last = rows[rows.length - 1];
      const arr = j.array_id !== null && j.array_id !== undefined && j.state === 'PENDING' && !S.expandArrays;
      if (arr && last && last.array_id === j.array_id && last.state === 'PENDING' && last.reason === j.reason)
        last.elems.push(j);
      else rows.push(Object.assign({}, j, { elems: [j] }));
    }
    const MAX_ROWS = 2000;
    for (const j of rows.slice(0, MAX_ROWS)) {
      const pos = j.position ?? '';
      const poss = j.elems.map((e) => e.position).filter((p) => p !== null && p !== undefined && p !== 0);
      const posText = poss.length > 1 ? ranges(poss) : String(pos);
      /* a reason applies to a job waiting or stopping; a running job's is its last stop's */
      const why = !j.reason ? '' : j.state === 'RUNNING' ? 'last stop: ' + j.reason : j.reason;
      const waitOrRun = j.state === 'PENDING' ? fmtDur(now - j.submit_us) : (j.last_start_us ? fmtDur(now - j.last_start_us) : '');
      const many = j.elems.length > 1;
      const label = many ? `${j.array_id}_[${ranges(j.elems.map((e) => e.array_task))}]`
        : j.array_id !== null && j.array_id !== undefined ? `${j.array_id}_${j.array_task}` : String(j.id);
      tb.append(el('tr', { 'data-job': j.id, 'data-state': j.state, 'data-user': j.user, 'data-vc': j.vc,
        'data-array': many ? j.array_id : null, 'data-count': many ? j.elems.length : null,
        'data-elems': many ? j.elems.map((e) => e.id).join(',') : null },
        el('td', { cls: 'pos num', 'data-pos': pos, text: posText }),
        el('td', { cls: 'id' }, el('a', { href: '#/job/' + j.id, text: label, title: many ? `${j.elems.length} pending elements` : `job ${j.id}` })),
        el('td', { cls: 'name', text: many ? `${j.name} (${j.elems.length})` : j.name }),
        el('td', { text: j.user }),
        el('td', { text: j.vc }),
        el('td', null, el('span', { cls: 'st-badge st-' + j.state, text: j.st || j.state })),
        el('td', { cls: 'num', text: j.members || j.gpus }),
        el('td', { cls: 'num', text: waitOrRun }),
        el('td', { cls: 'reason', text: why }),
        el('td', { cls: 'mono', text: j.placement || '' })));
    }
    const pend = jobs.filter((j) => j.state === 'PENDING').length;
    const hasArrays = jobs.some((j) => j.array_id !== null && j.array_id !== undefined);
    const expand = el('input', { id: 'expand-arrays', type: 'checkbox', onchange: (e) => { S.expandArrays = e.target.checked; load(false); } });
    expand.checked = !!S.expandArrays;
    return el('div', null,
      el('div', { cls: 'toolbar' },
        el('span', { cls: 'stat' }, el('b', { text: pend }), ' pending'),
        el('span', { cls: 'stat' }, el('b', { text: jobs.length - pend }), ' running or stopping'),
        hasArrays ? el('label', null, expand, ' one row per array element') : null,
        r.total > jobs.length ? el('span', { cls: 'note', text: `the first ${jobs.length} of ${r.total} jobs` }) : null,
        rows.length > MAX_ROWS ? el('span', { cls: 'note', text: `showing the first ${MAX_ROWS} rows of ${rows.length}` }) : null),
      el('div', { cls: 'scroll' }, el('table', { id: 'queue' },
        el('thead', null, el('tr', null, ['POS', 'ID', 'NAME', 'USER', 'VC', 'ST', 'GPUS', 'WAIT/RUN', 'REASON', 'NODES']
          .map((h, i) => el('th', { cls: i === 0 || i === 6 || i === 7 ? 'num' : '', text: h })))),
        tb)),
      jobs.length ? null : el('p', { cls: 'muted', text: 'No active job you may see.' }));
  };

  /* ---- job page ------------------------------------------------------------------------------ */
  const FINAL = new Set(['DONE', 'FAILED', 'CANCELLED', 'REJECTED']);
  async function logTail(id, task) {
    const base = `/v1/jobs/${id}/logs?task=${task}`;
    try {
      const head = await api('GET', base + '&offset=0&limit=1');
      const size = Number(head.headers.get('X-Log-Size') || 0);
      const off = Math.max(0, size - 32768);
      const r = await api('GET', `${base}&offset=${off}&limit=32768`);
      return (off > 0 ? `… (${off} bytes before)\n` : '') + (r.data || '');
    } catch (e) {
      if (e.status === 404) return '(no log yet)';
      throw e;
    }
  }
  PAGES.job = async function (arg) {
    const id = String(arg).replace(/[^0-9]/g, '');
    if (!id) throw new ApiError(400, 'no job id in the address', null);
    const j = (await api('GET', '/v1/jobs/' + id)).data;
    const ntasks = Math.max(1, (j.task_list || []).length, j.tasks || 1);
    if (S.logTask === undefined || S.logJob !== id) { S.logTask = 0; S.logJob = id; }
    const log = j.runs > 0 || (j.task_list || []).length ? await logTail(id, S.logTask) : '(not started)';
    const mine = S.me.admin || j.user === S.me.user;
    const acts = el('div', { cls: 'actions' });
    function act(a, label, method, path, cls) {
      acts.append(el('button', {
        type: 'button', cls, 'data-action': a, 'data-job': j.id, text: label,
        onclick: () => ask(`${label} job ${j.id} (${j.name || 'no name'})?`, `Yes, ${label.toLowerCase()}`, false, () => acting(async () => {
          try {
            const r = await api(method, path);
            const st = r.data && r.data.state ? ` (${r.data.state})` : '';
            flash(`job ${j.id}: ${a} accepted${st}`);
          } catch (e) { flash(e.message, true); }
        })),
      }));
    }
    if (mine && !FINAL.has(j.state)) {
      act('cancel', 'Cancel', 'DELETE', '/v1/jobs/' + j.id, 'danger');
      if (j.state === 'PENDING') {
        /* held: the reason says so (JobHeldUser, ...) */
        if (/held/i.test(j.reason || '')) act('release', 'Release', 'POST', `/v1/jobs/${j.id}/release`);
        else act('hold', 'Hold', 'POST', `/v1/jobs/${j.id}/hold`);
      }
      if (j.state === 'RUNNING' && has('POST', '/v1/jobs/{id}/requeue'))
        act('requeue', 'Requeue', 'POST', `/v1/jobs/${j.id}/requeue`);
    }
    const kv = el('dl', { cls: 'kv' });
    const put = (k, v) => { if (v !== null && v !== undefined && v !== '') kv.append(el('dt', { text: k }), el('dd', { text: v })); };
    put('user', j.user); put('VC', j.vc); put('priority', j.priority);
    put('GPUs', j.members ? `${j.gpus} (tasks of ${j.members})` : `${j.gpus} (${j.tasks} × ${j.gpus_per_task})`);
    put('position', j.position); put(j.state === 'RUNNING' ? 'last stop' : 'reason', j.reason);
    put('why pending', j.why_pending);
    put('submitted', fmtTime(j.submit_time)); put('started', fmtTime(j.start_time));
    put('last start', j.last_start_time !== j.start_time ? fmtTime(j.last_start_time) : '');
    put('ended', fmtTime(j.end_time)); put('time limit', j.time_limit_us ? fmtDur(j.time_limit_us) : '');
    put('ran for', j.executed_us ? fmtDur(j.executed_us) : ''); put('placement', j.placement);
    put('runs', j.runs); put('preemptions', j.preemptions); put('exit code', j.exit_code);
    put('stopping', j.stopping); put('cancelled by', j.cancelled_by);
    if (j.elastic) put('elastic', `${j.elastic.phase || ''} ${j.elastic.min_gpus}-${j.elastic.max_gpus} GPUs, generation ${j.elastic.generation}, ${j.elastic.rescales} rescale(s)`);
    const evs = el('tbody');
    const resizes = el('tbody');
    for (const e of j.events || []) {
      const row = () => el('tr', { 'data-type': e.type }, el('td', { cls: 'mono', text: fmtTime(e.time) }),
        el('td', { text: e.type }), el('td', { cls: 'reason', text: e.reason || '' }));
      evs.append(row());
      if (/resiz|rescal|drain/i.test(e.type)) resizes.append(row());
    }
    const taskSel = el('select', { id: 'log-task', onchange: (e) => { S.logTask = Number(e.target.value); load(false); } });
    for (let t = 0; t < ntasks; t++) taskSel.append(el('option', { value: t, text: 'task ' + t }));
    taskSel.value = String(S.logTask);
    const spec = JSON.stringify(j.spec, null, 2);
    const root = el('div', { id: 'job', 'data-job': j.id, 'data-state': j.state },
      el('div', { cls: 'card' },
        el('div', { cls: 'toolbar' },
          el('h2', { text: `Job ${j.id}${j.array_id !== null && j.array_id !== undefined ? ` (${j.array_id}_${j.array_task})` : ''}${j.name ? ' · ' + j.name : ''}` }),
          el('span', { cls: 'st-badge st-' + j.state, text: j.state }),
          el('span', { cls: 'spacer' }), acts),
        kv),
      el('div', { cls: 'two' },
        el('div', { cls: 'card' }, el('h3', { text: 'Events' }),
          el('div', { cls: 'scroll' }, el('table', { id: 'job-events' },
            el('thead', null, el('tr', null, el('th', { text: 'TIME' }), el('th', { text: 'EVENT' }), el('th', { text: 'REASON' }))), evs)),
          resizes.children.length ? el('h3', { text: 'Resizes' }) : null,
          resizes.children.length ? el('table', { id: 'job-resizes' }, resizes) : null),
        el('div', { cls: 'card' }, el('h3', { text: 'Spec' }), el('pre', { id: 'job-spec', cls: 'box spec', text: spec }))),
      el('div', { cls: 'card' },
        el('div', { cls: 'toolbar' }, el('h3', { text: 'Log (tail)' }), ntasks > 1 ? taskSel : null),
        el('pre', { id: 'job-log', cls: 'box', text: log })));
    setTimeout(() => { const p = $('#job-log'); if (p) p.scrollTop = p.scrollHeight; }, 0);
    return root;
  };

  /* ---- charts (inline SVG) ------------------------------------------------------------------- */
  /* series: [{name, color, pts: [[t_ms, v], ...], dash, step, bars}] */
  function chart(id, title, series, opts) {
    const W = opts.wide ? 1300 : 640, H = 220, L = 44, R = 10, T = 22, B = 26;
    const s = sv('svg', { id, class: 'chart', viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': title });
    const all = series.flatMap((x) => x.pts);
    s.append(sv('text', { x: L, y: 14, 'font-weight': 600 }, title));
    const t0 = opts.from, t1 = opts.to;
    const top = Math.max(1, ...all.map((p) => p[1]), opts.ymin || 0);
    const nice = (v) => { const e = Math.pow(10, Math.floor(Math.log10(v))); const m = v / e; return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * e; };
    const tick = Math.max(1, nice(top / 4));
    const ymax = Math.ceil(top / tick) * tick;
    const X = (t) => L + (W - L - R) * (t - t0) / Math.max(1, t1 - t0);
    const Y = (v) => H - B - (H - T - B) * v / ymax;
    for (let v = 0; v <= ymax; v += tick) {
      const y = Y(v);
      s.append(sv('line', { x1: L, x2: W - R, y1: y, y2: y, class: 'grid' }));
      s.append(sv('text', { x: L - 4, y: y + 3, 'text-anchor': 'end' }, v));
    }
    s.append(sv('line', { x1: L, x2: L, y1: T, y2: H - B, class: 'axis' }));
    s.append(sv('line', { x1: L, x2: W - R, y1: H - B, y2: H - B, class: 'axis' }));
    for (let i = 0; i <= 4; i++) {
      const t = t0 + (t1 - t0) * i / 4, d = new Date(t);
      const lab = t1 - t0 > 2 * 86400e3 ? `${d.getMonth() + 1}/${d.getDate()} ${p2(d.getHours())}h`
        : t1 - t0 > 900e3 ? `${p2(d.getHours())}:${p2(d.getMinutes())}`
          : `${p2(d.getHours())}:${p2(d.getMinutes())}:${p2(d.getSeconds())}`;
      s.append(sv('text', { x: X(t), y: H - 8, 'text-anchor': i === 0 ? 'start' : i === 4 ? 'end' : 'middle' }, lab));
    }
    if (!all.length) {
      s.append(sv('text', { x: W / 2, y: H / 2, 'text-anchor': 'middle', class: 'empty' }, 'no samples in this range yet'));
      return s;
    }
    let lx = W - R;
    for (const x of series.slice().reverse()) {
      const tw = 8 + x.name.length * 6.2;
      lx -= tw + 10;
      /* the key in the series' style: a square for lines and bars, a dash for dashed lines */
      if (x.dash) s.append(sv('line', { x1: lx, x2: lx + 11, y1: 11, y2: 11, stroke: x.color, 'stroke-width': 2, 'stroke-dasharray': '4 3', class: 'key-dash' }));
      else s.append(sv('rect', { x: lx, y: 6, width: 10, height: 10, fill: x.color }));
      s.append(sv('text', { x: lx + 13, y: 15 }, x.name));
    }
    /* levels (series with .level: a constant, as the VCs' guarantees) labelled at their left
     * end, one label per value: equal levels draw over each other, the label names them all */
    const levels = new Map();
    for (const x of series) if (x.level !== undefined) levels.set(x.level, (levels.get(x.level) || []).concat(x.levelName || x.name));
    for (const [v, names] of levels)
      s.append(sv('text', { x: L + 4, y: Y(v) - 3, class: 'level', 'data-level': v }, `${opts.levelTitle || ''}${v}: ${names.join(', ')}`));
    const bw = Math.max(1.5, (W - L - R) / Math.max(1, (t1 - t0) / (opts.step || 1)) * 0.8);
    series.forEach((x, si) => {
      if (x.bars) {
        const off = series.filter((y) => y.bars).length > 1 ? (si % 2 ? bw / 2 : -bw / 2) : 0;
        for (const [t, v] of x.pts) {
          if (!(v > 0)) continue;
          const w = Math.max(1, bw / 2);
          const bx = Math.min(Math.max(L, X(t) - bw / 2 + off / 2), W - R - w); /* inside the axes */
          s.append(sv('rect', { x: bx, y: Y(v), width: w, height: Y(0) - Y(v), fill: x.color }));
        }
        return;
      }
      let d = '';
      x.pts.forEach(([t, v], i) => {
        const px = X(t).toFixed(1), py = Y(v).toFixed(1);
        d += i === 0 ? `M${px},${py}` : (x.step ? `H${px}V${py}` : `L${px},${py}`);
      });
      if (x.step && x.pts.length) d += `H${X(t1).toFixed(1)}`;
      s.append(sv('path', { d, fill: 'none', stroke: x.color, 'stroke-width': x.width || 1.8, 'stroke-dasharray': x.dash || 'none', 'stroke-dashoffset': x.offset || 0 }));
    });
    return s;
  }
  function rangeSel() {
    const sel = el('select', { id: 'range', onchange: (e) => { S.range = Number(e.target.value); load(false); } });
    for (const [v, t] of [[900, 'last 15 min'], [3600, 'last hour'], [6 * 3600, 'last 6 hours'], [86400, 'last day'], [7 * 86400, 'last 7 days']])
      sel.append(el('option', { value: v, text: t }));
    sel.value = String(S.range);
    return el('label', null, 'Range ', sel);
  }
  async function stats() {
    const r = (await api('GET', `/v1/stats?from=-${S.range}`)).data;
    const pts = (r.samples || []).slice();
    if (r.now) pts.push(Object.assign({}, r.now, { started: 0, finished: 0 }));
    /* the axis starts at the range's start, or at the first sample when the daemon has none
     * before (a new daemon: its first minutes fill the chart, not a sliver at its right) */
    const to = Math.max(r.to_us, r.now ? r.now.t_us : 0) / 1000;
    let from = r.from_us / 1000;
    if (pts.length && pts[0].t_us / 1000 > from) from = pts[0].t_us / 1000;
    if (to - from < 60000) from = to - 60000;
    return { r, pts, from, to };
  }
  PAGES.charts = async function () {
    const { r, pts, from, to } = await stats();
    const o = { from, to, step: (r.step_seconds || 1) * 1000 };
    const ser = (k) => pts.map((p) => [p.t_us / 1000, p[k]]);
    const samples = (r.samples || []);
    const cnt = (k) => samples.map((p) => [p.t_us / 1000, p[k]]);
    return el('div', null,
      el('div', { cls: 'toolbar' }, rangeSel(),
        el('span', { cls: 'note', text: r.interval_seconds ? `one sample every ${r.interval_seconds} s at most (when something changed); step ${Math.round(r.step_seconds)} s` : 'this daemon keeps no samples (--stats-interval 0)' })),
      el('div', { cls: 'charts' },
        el('div', { cls: 'card' }, chart('chart-alloc', 'GPUs', [
          { name: 'allocated', color: '#2f5bd3', pts: ser('alloc_gpus'), step: true },
          { name: 'total', color: '#9aa3af', pts: ser('total_gpus'), step: true, dash: '4 3', width: 1.2 }], o)),
        el('div', { cls: 'card' }, chart('chart-pending', 'Jobs', [
          { name: 'pending', color: '#d08a1c', pts: ser('pending'), step: true },
          { name: 'running', color: '#1f8a4c', pts: ser('running'), step: true }], o)),
        el('div', { cls: 'card' }, chart('chart-jobs', 'Jobs started / finished per step', [
          { name: 'started', color: '#1f8a4c', pts: cnt('started'), bars: true },
          { name: 'finished', color: '#6b4fc4', pts: cnt('finished'), bars: true }], o))));
  };

  /* ---- VCs ----------------------------------------------------------------------------------- */
  PAGES.vcs = async function () {
    const v = (await api('GET', '/v1/vcs')).data;
    const { r, pts, from, to } = await stats();
    const tb = el('tbody');
    const vcs = v.vcs || [];
    const maxG = Math.max(1, ...vcs.map((x) => Math.max(x.allocated_gpus, x.guaranteed_gpus || 0)));
    for (const x of vcs) {
      const bar = el('div', { cls: 'bar', title: `${x.allocated_gpus} allocated${x.guaranteed_gpus !== null ? ', ' + x.guaranteed_gpus + ' guaranteed' : ''}` },
        el('span'), x.guaranteed_gpus !== null ? el('i') : null);
      bar.firstChild.style.width = (100 * x.allocated_gpus / maxG) + '%';
      bar.firstChild.style.background = vcColor(x.name);
      if (x.guaranteed_gpus !== null) bar.lastChild.style.left = (100 * x.guaranteed_gpus / maxG) + '%';
      const over = x.guaranteed_gpus !== null && x.allocated_gpus > x.guaranteed_gpus;
      tb.append(el('tr', {
        'data-vc': x.name, 'data-guaranteed': x.guaranteed_gpus === null ? '' : x.guaranteed_gpus,
        'data-allocated': x.allocated_gpus, 'data-pending': x.pending_jobs,
      },
      el('td', null, swatch(vcColor(x.name)), x.name),
      el('td', { cls: 'num', text: x.guaranteed_gpus === null ? '—' : x.guaranteed_gpus }),
      el('td', { cls: 'num', text: x.allocated_gpus }),
      el('td', { cls: 'num', text: x.running_jobs }),
      el('td', { cls: 'num', text: x.pending_jobs }),
      el('td', { cls: 'num', text: x.pending_gpus }),
      el('td', null, bar),
      el('td', { text: over ? 'over its guarantee' : '' })));
    }
    const names = vcs.map((x) => x.name);
    const series = [];
    for (const n of names.slice(0, 12)) {
      series.push({ name: n, color: vcColor(n), step: true,
        pts: pts.map((p) => [p.t_us / 1000, p.vcs && p.vcs[n] ? p.vcs[n].allocated : 0]) });
    }
    const guar = [];
    for (const x of vcs.slice(0, 12)) if (x.guaranteed_gpus !== null)
      guar.push({ name: x.name + ' guarantee', color: vcColor(x.name), dash: '5 4', width: 1.1,
        level: x.guaranteed_gpus, levelName: x.name,
        pts: [[from, x.guaranteed_gpus], [to, x.guaranteed_gpus]] });
    /* n equal guarantees: dashes of the one line take turns (each its own phase of a period n
     * times as long), so every VC's colour shows along it */
    const count = new Map(), seen = new Map();
    for (const g of guar) count.set(g.level, (count.get(g.level) || 0) + 1);
    for (const g of guar) {
      const n = count.get(g.level), k = seen.get(g.level) || 0;
      seen.set(g.level, k + 1);
      if (n > 1) { g.dash = `5 ${9 * n - 5}`; g.offset = 9 * k; }
    }
    return el('div', null,
      el('div', { cls: 'scroll card' }, el('table', { id: 'vcs' },
        el('thead', null, el('tr', null, ['VC', 'GUARANTEED', 'ALLOCATED', 'RUNNING', 'PENDING', 'PENDING GPUS', 'USE', '']
          .map((h, i) => el('th', { cls: i >= 1 && i <= 5 ? 'num' : '', text: h })))), tb)),
      vcs.length ? null : el('p', { cls: 'muted', text: 'No VC yet (a VC appears once a job in it is accepted, or when the cluster or the policy declares it).' }),
      el('div', { cls: 'toolbar' }, rangeSel()),
      el('div', { cls: 'card' }, chart('chart-vc-usage', 'GPUs allocated per VC (dashed: guarantee)', series.concat(guar), { from, to, step: (r.step_seconds || 1) * 1000, wide: true, levelTitle: 'guarantee ' })));
  };

  /* ---- history ------------------------------------------------------------------------------- */
  PAGES.history = async function () {
    if (!has('GET', '/v1/history'))
      return el('div', { cls: 'card', id: 'history-unavailable' },
        el('h3', { text: 'History is not available' }),
        el('p', { text: 'This daemon has no accounting endpoint (GET /v1/history). Finished jobs are still listed by the API: GET /v1/jobs?state=all, or gsched queue -a.' }));
    const f = S.hist || (S.hist = { user: '', vc: '', state: '' });
    const q = new URLSearchParams({ limit: '500' });
    for (const k of ['user', 'vc', 'state']) if (f[k]) q.set(k, f[k]);
    /* oldest first in the API: ask for the total, then the last page */
    q.set('limit', '1');
    const total = (await api('GET', '/v1/history?' + q.toString())).data.total || 0;
    q.set('limit', '500');
    q.set('offset', String(Math.max(0, total - 500)));
    const r = (await api('GET', '/v1/history?' + q.toString())).data;
    const rows = (r.jobs || []).slice().sort((a, b) => (b.end_us || 0) - (a.end_us || 0) || b.id - a.id);
    const input = (k, ph) => el('input', { id: 'history-' + k, type: 'text', placeholder: ph, value: f[k],
      onchange: (e) => { f[k] = e.target.value.trim(); load(false); } });
    const stSel = el('select', { id: 'history-state', onchange: (e) => { f.state = e.target.value; load(false); } },
      [['', 'any state'], ['CD', 'DONE'], ['F', 'FAILED'], ['CA', 'CANCELLED'], ['RJ', 'REJECTED']]
        .map(([v, t]) => el('option', { value: v, text: t })));
    stSel.value = f.state;
    const tb = el('tbody');
    for (const j of rows) {
      const id = j.id ?? j.job ?? j.job_id;
      tb.append(el('tr', { 'data-job': id, 'data-state': j.state || '' },
        el('td', null, el('a', { href: '#/job/' + id, text: j.array_id && j.array_task !== null && j.array_task !== undefined ? `${j.array_id}_${j.array_task}` : id })),
        el('td', { text: j.name || '' }), el('td', { text: j.user || '' }), el('td', { text: j.vc || '' }),
        el('td', null, el('span', { cls: 'st-badge st-' + (j.state || ''), text: j.state || '' })),
        el('td', { cls: 'num', text: j.exit_code ?? '' }),
        el('td', { cls: 'mono', text: fmtTime(j.submit_time || j.submit) }),
        el('td', { cls: 'mono', text: fmtTime(j.start_time || j.start) }),
        el('td', { cls: 'mono', text: fmtTime(j.end_time || j.end) }),
        el('td', { cls: 'num', text: j.elapsed_us !== undefined ? fmtDur(j.elapsed_us) : (j.elapsed || '') }),
        el('td', { cls: 'num', text: j.gpu_hours !== undefined ? Number(j.gpu_hours).toFixed(2) : (j.gpu_us !== undefined && j.gpu_us !== null ? (j.gpu_us / 3.6e9).toFixed(2) : '') }),
        el('td', { cls: 'num', text: j.preemptions ?? '' }),
        el('td', { cls: 'num', text: j.resizes ?? '' })));
    }
    return el('div', null,
      el('div', { cls: 'toolbar' }, input('user', 'user'), input('vc', 'VC'), stSel,
        el('span', { cls: 'note', text: `${rows.length} of ${r.total ?? rows.length} finished job(s), latest first` })),
      el('div', { cls: 'scroll' }, el('table', { id: 'history' },
        el('thead', null, el('tr', null, ['ID', 'NAME', 'USER', 'VC', 'STATE', 'EXIT', 'SUBMIT', 'START', 'END', 'ELAPSED', 'GPU-HOURS', 'PREEMPT', 'RESIZES']
          .map((h) => el('th', { text: h })))), tb)),
      rows.length ? null : el('p', { cls: 'muted', text: 'No finished job yet.' }));
  };

  /* ---- report viewer ------------------------------------------------------------------------- */
  /* A local report.html (gsched sim --out DIR) read in the browser and shown in a sandboxed
   * frame (no script, no same-origin access): nothing is uploaded. */
  S.report = null;
  PAGES.report = async function (arg, nav) {
    if (!nav && $('#report-frame')) return null; /* a refresh keeps the open report */
    const frame = el('iframe', { id: 'report-frame', sandbox: '', title: 'simulation report' });
    const input = el('input', { id: 'report-file', type: 'file', accept: '.html,text/html' });
    const name = el('span', { cls: 'note', id: 'report-name' });
    function show(text, fname) {
      frame.srcdoc = text;
      name.textContent = fname ? `${fname} (${text.length} bytes, read locally)` : '';
    }
    input.addEventListener('change', () => {
      const f = input.files && input.files[0];
      if (!f) return;
      const rd = new FileReader();
      rd.onload = () => { S.report = { text: String(rd.result), name: f.name }; show(S.report.text, f.name); };
      rd.onerror = () => flash('cannot read ' + f.name, true);
      rd.readAsText(f);
    });
    if (S.report) show(S.report.text, S.report.name);
    else frame.srcdoc = '<p style="font-family:sans-serif;color:#667085;padding:20px">Pick a report.html (written by gsched sim --out DIR) above. It is read by this browser and shown here; nothing is uploaded.</p>';
    return el('div', null,
      el('div', { cls: 'toolbar' }, el('label', null, 'Simulation report ', input), name),
      frame);
  };

  document.addEventListener('DOMContentLoaded', boot);
})();
