// The dashboard's pages in a real headless chromium, checked against the API they show
// (docs/dashboard.md, "DOM contract"). Run by tests/e2e/dashboard_browser.sh, which starts the
// daemon (tokens, loopback TCP, fake GPUs in racks), submits the jobs and passes, in the
// environment:
//   GS_URL      the daemon's base URL (http://127.0.0.1:PORT)
//   GS_ADMIN, GS_ALICE, GS_BOB   bearer tokens (an admin, two users)
//   GS_JOBS     JSON: {"running_alice": ID, "cancel": ID (alice's, running), "held": ID,
//               "bob_running": ID, ...} the jobs the checks name
//   GS_RACKS    JSON: {"n0": "r0", ...} the rack of every node (from the --cluster shorthand)
//   GS_REPORT   a simulation report.html for the report page
//   GS_SHOTS    the directory the screenshots go to (one PNG per page and view)
//   GS_TMP      a private temp directory (browser profile, chromium's pid file)
// With --insecure: GS_URL is a daemon with --insecure-tcp (no tokens; GS_JOBS names only
// running_alice there): the pages work without a token.
// Prints "ok - ..." / "not ok - ..." lines and "N passed, N failed"; exits 1 on any failure.
// Bounded: every wait has a limit and a watchdog ends the whole run (and chromium).
'use strict';

const fs = require('fs');
const http = require('http');
const path = require('path');
const cdp = require('./cdp.js');

const env = (k) => {
  const v = process.env[k];
  if (v === undefined || v === '') {
    console.error(`dashboard.js: ${k} is not set`);
    process.exit(2);
  }
  return v;
};
const URL0 = env('GS_URL');
const TOK = { admin: env('GS_ADMIN'), alice: env('GS_ALICE'), bob: env('GS_BOB') };
const JOBS = JSON.parse(env('GS_JOBS'));
const RACKS = JSON.parse(env('GS_RACKS'));
const REPORT = env('GS_REPORT');
const SHOTS = env('GS_SHOTS');
const TMP = env('GS_TMP');
const READY_MS = 20000; // a page's first data load, on a loaded 2-core CI machine

let pass = 0;
let fail = 0;
function check(name, cond, detail = '') {
  if (cond) {
    pass++;
    console.log(`ok - ${name}`);
  } else {
    fail++;
    console.log(`not ok - ${name}${detail ? ': ' + detail : ''}`);
  }
  return !!cond;
}
const str = (v) => (v === null || v === undefined ? '' : String(v));
const sleep = cdp.sleep;

// api(method, path, token, body): {status, headers, body (parsed JSON when it is JSON)}
function api(method, p, token, body = undefined, timeoutMs = 10000) {
  return new Promise((resolve, reject) => {
    const headers = {};
    if (token) headers.Authorization = `Bearer ${token}`;
    if (method !== 'GET') headers['X-Gsched-Client'] = '1';
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    const req = http.request(URL0 + p, { method, headers, timeout: timeoutMs }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let body = text;
        if (/json/.test(res.headers['content-type'] || '')) {
          try {
            body = JSON.parse(text);
          } catch (e) {
            /* keep the text */
          }
        }
        resolve({ status: res.statusCode, headers: res.headers, body });
      });
    });
    req.on('timeout', () => req.destroy(new Error(`${method} ${p}: no answer in ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}
async function apiJson(p, token) {
  const r = await api('GET', p, token);
  if (r.status !== 200) throw new Error(`GET ${p}: ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`);
  return r.body;
}

// ---- pages

// show(page, route): a fresh load of URL/#route, waiting (bounded) for body[data-ready="1"];
// returns the index of page.problems where this load started. Leaving through about:blank is
// leaving the site: the browser may keep the old page in its back/forward cache, and one tab
// loads more pages this way than the browser's 6 connections to a host (a cached page that kept
// its event stream open would hold one each)
async function show(page, route, what = route) {
  await page.goto('about:blank');
  const mark = page.problems.length;
  await page.goto(`${URL0}/${route}`);
  await ready(page, what);
  return mark;
}
async function ready(page, what) {
  try {
    await page.waitFor(`document.body && document.body.dataset.ready === '1'`, READY_MS, `${what}: body[data-ready="1"]`);
  } catch (e) {
    const err = await page.evaluate(`(document.getElementById('error') || {}).textContent || ''`).catch(() => '');
    throw new Error(`${e.message}${err ? ` (#error: ${err})` : ''}`);
  }
}
// go(page, route): in-page navigation (the app's own router), waiting for the new page's data
async function go(page, route, what = route) {
  await page.evaluate(`new Promise((res) => {
    window.addEventListener('hashchange', () => setTimeout(res, 0), { once: true });
    location.hash = ${JSON.stringify(route)};
  })`);
  await ready(page, what);
}

// settle(page, name, mark, allow): the checks every page gets: no console errors or exceptions
// since mark (allow: a filter for expected ones), #error empty, no horizontal scrolling on a
// laptop screen (1366 px), and its screenshot
async function settle(page, name, mark, opts = {}) {
  await sleep(200); // late console messages
  const probs = page.problemsSince(mark).filter((p) => !(opts.allow && opts.allow(p)));
  check(`${name}: no console errors or exceptions`, probs.length === 0, JSON.stringify(probs).slice(0, 600));
  if (!opts.errorExpected) {
    const err = await page.evaluate(`(document.getElementById('error') || {}).textContent || ''`);
    check(`${name}: #error is empty`, err.trim() === '', err);
  }
  const over = await page.evaluate(`document.documentElement.scrollWidth - window.innerWidth`);
  check(`${name}: fits a laptop screen's width (no horizontal scrolling at 1366 px)`, over <= 0, `${over} px too wide`);
  const file = path.join(SHOTS, `${name}.png`);
  await page.screenshot(file);
  check(`${name}: screenshot ${path.relative(process.cwd(), file)}`, fs.statSync(file).size > 1000);
}

const TOKEN_SHOWN = `(() => { const t = document.querySelector('input#token'); return !!(t && t.offsetParent !== null); })()`;

// login(page, token): the token form, then the first page's data
async function login(page, token, who) {
  await page.goto('about:blank');
  const mark = page.problems.length;
  await page.goto(`${URL0}/`);
  await page.waitFor(TOKEN_SHOWN, READY_MS, 'input#token shown');
  check(`${who}: the page asks for a token`, true);
  await page.type('input#token', token);
  await page.click('button#login');
  // the sign-in form itself counts as a ready page: wait for it to go first
  await page.waitFor(`!${TOKEN_SHOWN}`, READY_MS, `${who}: the sign-in form gone after login`);
  await ready(page, `${who}: first page after login`);
  const kept = await page.evaluate(`sessionStorage.getItem('gsched.token')`);
  check(`${who}: token kept in sessionStorage['gsched.token']`, kept === token);
  await sleep(200);
  const probs = page.problemsSince(mark);
  check(`${who}: signed in without console errors`, probs.length === 0, JSON.stringify(probs).slice(0, 600));
  return mark;
}

// ---- DOM readers (evaluated in the page)
const READ_MAP = `(() => {
  const gpus = Array.from(document.querySelectorAll('.gpu')).map((g) => {
    const node = g.closest('.node');
    const rack = g.closest('.rack');
    return { node: g.dataset.node, gpu: g.dataset.gpu, job: g.dataset.job, vc: g.dataset.vc,
             title: g.getAttribute('title') || '', bg: getComputedStyle(g).backgroundColor,
             inNode: node ? node.dataset.node : null, rack: rack ? rack.dataset.rack : null };
  });
  const nodes = Array.from(document.querySelectorAll('.node')).map((n) => {
    const rack = n.closest('.rack');
    return { node: n.dataset.node, state: n.dataset.state, title: n.getAttribute('title') || '',
             rack: rack ? rack.dataset.rack : null };
  });
  const legend = Array.from(document.querySelectorAll('#legend a[data-job]')).map((a) => a.textContent.trim());
  const keys = {};
  for (const k of document.querySelectorAll('#legend [data-key]')) keys[k.dataset.key] = k.textContent.trim();
  const offNodes = {};
  for (const s of document.querySelectorAll('.stat[data-nodes]')) offNodes[s.dataset.nodes] = s.textContent.trim();
  return { gpus, nodes, legend, keys, offNodes, hidden: document.querySelectorAll('.gpu.hidden-job').length,
           text: document.body.innerText };
})()`;
const READ_QUEUE = `Array.from(document.querySelectorAll('table#queue tbody tr[data-job]')).map((r) => {
  const reason = r.querySelector('td.reason');
  const pos = r.querySelector('td.pos');
  return { job: r.dataset.job, array: r.dataset.array, count: r.dataset.count, elems: r.dataset.elems,
           reason: reason ? reason.textContent.trim() : null,
           pos: pos ? (pos.dataset.pos === undefined ? null : pos.dataset.pos) : null,
           posText: pos ? pos.textContent.trim() : null,
           text: r.innerText };
})`;
const READ_VCS = `Array.from(document.querySelectorAll('table#vcs tr[data-vc]')).map((r) => ({
  vc: r.dataset.vc, guaranteed: r.dataset.guaranteed, allocated: r.dataset.allocated,
  pending: r.dataset.pending }))`;

// job id -> its colour on the admin's map (the same job must have it on every map)
const jobColours = new Map();

// stable(): wait (bounded) until GET /v1/nodes?gpus=1 reads the same twice 600 ms apart: the
// scheduler has placed what a cancel freed, so a page and the API read the same cluster
async function stable() {
  let last = '';
  for (let i = 0; i < 30; i++) {
    const now = JSON.stringify((await apiJson('/v1/nodes?gpus=1', TOK.admin)).nodes);
    if (now === last) return;
    last = now;
    await sleep(600);
  }
}

// the API's node states that the map shows as "up"
const UP_STATES = new Set(['idle', 'mixed', 'allocated', 'degraded']);

// checkMap(page, who, token): every GPU cell against GET /v1/nodes?gpus=1 as that user
async function checkMap(page, who, token) {
  const nodes = (await apiJson('/v1/nodes?gpus=1', token)).nodes;
  const dom = await page.evaluate(READ_MAP);
  const apiGpus = [];
  for (const n of nodes) for (const g of n.gpu_list) apiGpus.push({ node: n.name, g });
  check(`${who} map: one .gpu cell per GPU (${apiGpus.length})`, dom.gpus.length === apiGpus.length, `${dom.gpus.length} cells`);
  check(`${who} map: one .node per node (${nodes.length})`, dom.nodes.length === nodes.length, `${dom.nodes.length} nodes`);
  const bad = [];
  for (const { node, g } of apiGpus) {
    const c = dom.gpus.find((x) => x.node === node && x.gpu === String(g.local));
    if (!c) {
      bad.push(`no cell ${node}/${g.local}`);
      continue;
    }
    if (c.job !== str(g.job)) bad.push(`${node}/${g.local} data-job '${c.job}', API ${str(g.job)}`);
    if (c.inNode !== node) bad.push(`${node}/${g.local} not inside .node[data-node=${node}]`);
  }
  check(`${who} map: every GPU cell carries the job the API says (data-job)`, bad.length === 0, bad.slice(0, 6).join('; '));
  const badNodes = [];
  for (const n of nodes) {
    const d = dom.nodes.find((x) => x.node === n.name);
    if (!d) {
      badNodes.push(`no .node ${n.name}`);
      continue;
    }
    const want = UP_STATES.has(n.state) ? 'up' : n.state;
    if (d.state !== want) badNodes.push(`${n.name} data-state '${d.state}', API ${n.state}`);
    // (a node in no rack: in no .rack, or in one with data-rack="")
    if ((d.rack || null) !== (RACKS[n.name] || null)) badNodes.push(`${n.name} in rack '${d.rack}', want ${RACKS[n.name]}`);
  }
  check(`${who} map: nodes in their racks (.rack[data-rack]) with the API's state`, badNodes.length === 0, badNodes.join('; '));
  // the legend names each job "job ID [NAME] · N GPU(s)" (never a bare "1 · 2")
  const badLeg = dom.legend.filter((t) => !/^job \d+( .+)? · \d+ GPUs?$/.test(t));
  check(`${who} map: legend entries read "job ID NAME · N GPUs" (${dom.legend.length})`, dom.legend.length > 0 && badLeg.length === 0, badLeg.join(' | '));
  // the cells in no job's colour are explained: light grey free, grey other users' jobs
  check(`${who} map: the legend explains free cells ([data-key=free])`, /free/.test(dom.keys.free || ''), JSON.stringify(dom.keys));
  if (dom.hidden) check(`${who} map: the legend explains the ${dom.hidden} grey cells ([data-key=hidden]: other users' jobs)`, /other users/.test(dom.keys.hidden || ''), JSON.stringify(dom.keys));
  // the summary counts nodes out of service by their state (a draining node is not down)
  const want = {};
  for (const n of nodes) if (!UP_STATES.has(n.state)) want[n.state] = (want[n.state] || 0) + 1;
  const got = {};
  for (const k in dom.offNodes) got[k] = Number((/^(\d+)/.exec(dom.offNodes[k]) || [])[1]);
  check(`${who} map: the summary counts nodes per state as the API (${JSON.stringify(want)})`, JSON.stringify(got) === JSON.stringify(Object.fromEntries(Object.keys(got).sort().map((k) => [k, want[k]]))) && Object.keys(want).length === Object.keys(got).length, JSON.stringify(dom.offNodes));
  return { nodes, dom };
}

// colours(dom): job -> the one colour of its cells, or a failure text
function colours(dom, key = 'job') {
  const by = new Map();
  for (const c of dom.gpus) {
    const k = c[key] || '';
    if (!by.has(k)) by.set(k, new Set());
    by.get(k).add(c.bg);
  }
  return by;
}

// --insecure: a daemon on loopback with --insecure-tcp (no tokens): the pages work without one
async function insecure() {
  const idx = await api('GET', '/v1/jobs', null);
  check('--insecure-tcp: GET /v1/jobs without a token: 200', idx.status === 200, String(idx.status));
  const browser = await cdp.launch({
    userDataDir: path.join(TMP, 'profile-insecure'),
    pidFile: path.join(TMP, 'chromium.pid'),
    logFile: path.join(TMP, 'chromium.log'),
  });
  try {
    const page = await browser.newPage();
    const mark = await show(page, '#/cluster', '--insecure-tcp cluster');
    check('--insecure-tcp: no token asked', !(await page.evaluate(TOKEN_SHOWN)));
    const { dom } = await checkMap(page, '--insecure-tcp', null);
    check('--insecure-tcp map: the running job is shown', dom.gpus.some((c) => c.job === String(JOBS.running_alice)));
    await settle(page, 'insecure-cluster', mark);
    const m2 = await show(page, '#/queue', '--insecure-tcp queue');
    await checkQueue(page, '--insecure-tcp', null);
    await settle(page, 'insecure-queue', m2);
  } catch (e) {
    check('--insecure-tcp pages: ran to their end', false, e.stack || e.message);
  }
  await browser.close();
}

async function main() {
  if (process.argv[2] === '--insecure') return insecure();
  // ---- static assets and headers, without a token
  const idx = await api('GET', '/', null);
  check('GET / without a token: 200 text/html', idx.status === 200 && /^text\/html/.test(idx.headers['content-type'] || ''), `${idx.status} ${idx.headers['content-type']}`);
  const csp = idx.headers['content-security-policy'] || '';
  check(`GET /: CSP default-src 'self' and frame-ancestors 'none'`, /default-src 'self'/.test(csp) && /frame-ancestors 'none'/.test(csp), csp);
  check('GET /: X-Content-Type-Options nosniff', idx.headers['x-content-type-options'] === 'nosniff');
  check('GET /: Referrer-Policy no-referrer', idx.headers['referrer-policy'] === 'no-referrer');
  for (const [p, type] of [['/ui/app.js', /javascript/], ['/ui/app.css', /^text\/css/]]) {
    const r = await api('GET', p, null);
    check(`GET ${p} without a token: 200 ${type}`, r.status === 200 && type.test(r.headers['content-type'] || ''), `${r.status} ${r.headers['content-type']}`);
  }
  const noTok = await api('GET', '/v1/jobs', null);
  check('GET /v1/jobs without a token: 401', noTok.status === 401, String(noTok.status));

  const browser = await cdp.launch({
    userDataDir: path.join(TMP, 'profile'),
    pidFile: path.join(TMP, 'chromium.pid'),
    logFile: path.join(TMP, 'chromium.log'),
  });
  console.log(`# ${browser.version}`);
  // each part on its own tab; one that breaks off (a page never ready) fails and the next runs
  for (const [name, part] of [['admin', adminPages], ['alice', alicePages], ['bob', bobPages]]) {
    try {
      await part(browser);
    } catch (e) {
      check(`${name}'s pages: ran to their end`, false, e.stack || e.message);
    }
  }
  await browser.close();
}

async function adminPages(browser) {
  const page = await browser.newPage();
  // a wrong token: an error, no data
  {
    await page.goto('about:blank');
    const mark = page.problems.length; // the tab's first load (the browser asks for an icon)
    await page.goto(`${URL0}/`);
    await page.waitFor(TOKEN_SHOWN, READY_MS, 'input#token shown');
    await page.type('input#token', 'root.not-the-right-secret-at-all');
    await page.click('button#login');
    const err = await page.waitFor(`(document.getElementById('error') || {}).textContent`, READY_MS, '#error after a wrong token');
    check('a wrong token: #error says so', /401|token|unauthori|denied|invalid/i.test(err), err);
    const cells = await page.evaluate(`document.querySelectorAll('.gpu[data-job]:not([data-job=""]), #queue tbody tr').length`);
    check('a wrong token: no job data shown', cells === 0, `${cells} elements`);
    // the browser logs the 401 answers themselves; nothing else may appear
    await settle(page, 'login-wrong-token', mark, { errorExpected: true, allow: (p) => /401|Unauthorized/.test(p.text) });
    await page.evaluate(`sessionStorage.clear()`);
  }

  await login(page, TOK.admin, 'admin');
  check('admin: the default page is the cluster map', await page.evaluate(`document.querySelectorAll('.gpu').length > 0`));

  // ---- cluster map
  let mark = await show(page, '#/cluster');
  const { dom } = await checkMap(page, 'admin', TOK.admin);
  const jobs = (await apiJson('/v1/jobs', TOK.admin)).jobs;
  const byId = new Map(jobs.map((j) => [String(j.id), j]));
  const col = colours(dom);
  const jobCols = [...col.entries()].filter(([k]) => k !== '');
  check('admin map: every job has one colour on all its cells (and nodes)', jobCols.every(([, s]) => s.size === 1), jobCols.map(([k, s]) => `${k}:${[...s].join('|')}`).join(' '));
  const distinct = new Set(jobCols.map(([, s]) => [...s][0]));
  check(`admin map: the ${jobCols.length} jobs have ${jobCols.length} different colours`, distinct.size === jobCols.length, [...distinct].join(' '));
  const free = col.get('') ? [...col.get('')] : [];
  check('admin map: free GPUs are not coloured as a job', free.every((c) => !distinct.has(c)), free.join(' '));
  const badTitle = [];
  for (const c of dom.gpus) {
    if (!c.job) continue;
    const j = byId.get(c.job);
    if (!j) badTitle.push(`${c.node}/${c.gpu}: job ${c.job} not in /v1/jobs`);
    else {
      if (!(c.title.includes(c.job) && c.title.includes(j.user) && c.title.includes(j.vc))) badTitle.push(`${c.node}/${c.gpu} title '${c.title}'`);
      if (c.vc !== j.vc) badTitle.push(`${c.node}/${c.gpu} data-vc '${c.vc}', job's VC ${j.vc}`);
    }
  }
  check('admin map: a busy GPU names its job, user and VC (title) and carries data-vc', badTitle.length === 0, badTitle.slice(0, 5).join('; '));
  const multi = jobs.find((j) => j.id === JOBS.multinode);
  const multiNodes = new Set(dom.gpus.filter((c) => c.job === String(JOBS.multinode)).map((c) => c.node));
  check(`admin map: the two-node job ${JOBS.multinode} is shown on both its nodes in one colour`, multi && multiNodes.size === 2 && col.get(String(JOBS.multinode)).size === 1, [...multiNodes].join(','));
  await settle(page, 'cluster', mark);

  // colour by VC
  mark = page.problems.length;
  const hasSel = await page.evaluate(`(() => { const s = document.querySelector('select#color-by');
    if (!s) return false;
    s.value = 'vc'; s.dispatchEvent(new Event('change', { bubbles: true })); return s.value === 'vc'; })()`);
  check('admin map: select#color-by offers "vc"', hasSel);
  await sleep(300);
  const domVc = await page.evaluate(READ_MAP);
  const vcCol = colours(domVc, 'vc');
  const vcs = [...vcCol.entries()].filter(([k]) => k !== '');
  check('admin map by VC: one colour per VC', vcs.length >= 2 && vcs.every(([, s]) => s.size === 1), vcs.map(([k, s]) => `${k}:${[...s].join('|')}`).join(' '));
  check('admin map by VC: different VCs, different colours', new Set(vcs.map(([, s]) => [...s][0])).size === vcs.length);
  await settle(page, 'cluster-by-vc', mark);
  await page.evaluate(`(() => { const s = document.querySelector('select#color-by'); if (s) { s.value = 'job'; s.dispatchEvent(new Event('change', { bubbles: true })); } })()`);

  // the same job, the same colour after a reload (a stable function of the id)
  mark = await show(page, '#/cluster', 'cluster (reload)');
  const again = colours(await page.evaluate(READ_MAP));
  const same = jobCols.every(([k, s]) => again.get(k) && [...again.get(k)][0] === [...s][0]);
  check('admin map: colours are the same after a reload', same);
  for (const [k, cs] of jobCols) jobColours.set(k, [...cs][0]);

  // ---- node administration from the map: drain n1 (its jobs run on), then resume it
  await nodeAdmin(page, 'n1');

  // ---- queue, reached through the page's own navigation (its router resets data-ready)
  mark = page.problems.length;
  await page.click('a[href="#/queue"]');
  const nav = await page
    .waitFor(`location.hash === '#/queue' && document.body.dataset.ready === '1' && !!document.querySelector('table#queue')`, READY_MS, 'the queue page after a click on its link')
    .catch((e) => e.message);
  check('admin: the Queue link shows the queue', nav === true, String(nav));
  await checkQueue(page, 'admin', TOK.admin);
  await settle(page, 'queue', mark);

  // ---- job pages: a running job with a log, the held job
  mark = await show(page, `#/job/${JOBS.running_alice}`);
  await checkJob(page, 'admin', TOK.admin, JOBS.running_alice, { log: 'hello from' });
  await checkActions(page, 'admin', JOBS.running_alice, ['cancel', 'requeue']);
  await settle(page, `job-${JOBS.running_alice}`, mark);
  mark = await show(page, `#/job/${JOBS.held}`);
  await checkJob(page, 'admin', TOK.admin, JOBS.held, {});
  await checkActions(page, 'admin', JOBS.held, ['cancel', 'release']);
  const relSel = `button[data-action=release][data-job="${JOBS.held}"]`;
  check(`admin job ${JOBS.held} (held): a release button`, await page.evaluate(`!!document.querySelector('${relSel}')`));
  await settle(page, `job-${JOBS.held}-held`, mark);
  // release it from the page: the daemon no longer holds it
  mark = page.problems.length;
  await clickAction(page, relSel);
  const rflash = await page.waitFor(`(document.getElementById('flash') || {}).textContent`, READY_MS, '#flash after release').catch((e) => e.message);
  check(`admin job ${JOBS.held}: #flash reports the release`, /release/i.test(rflash), rflash);
  let reason = '';
  for (let i = 0; i < 100; i++) {
    const j = await apiJson(`/v1/jobs/${JOBS.held}`, TOK.admin);
    reason = `${j.state}/${j.reason}`;
    if (j.reason !== 'JobHeldUser') break;
    await sleep(100);
  }
  check(`admin job ${JOBS.held}: the daemon released it (${reason})`, !/JobHeldUser/.test(reason));
  await settle(page, `job-${JOBS.held}-released`, mark);
  await stable(); // whatever the release lets start has started

  // ---- VCs
  mark = await show(page, '#/vcs');
  const apiVcs = (await apiJson('/v1/vcs', TOK.admin)).vcs;
  const domVcs = await page.evaluate(READ_VCS);
  check(`admin vcs: one row per VC (${apiVcs.map((v) => v.name).join(',')})`, domVcs.length === apiVcs.length && apiVcs.every((v) => domVcs.some((d) => d.vc === v.name)), JSON.stringify(domVcs));
  const badVc = [];
  for (const v of apiVcs) {
    const d = domVcs.find((x) => x.vc === v.name);
    if (!d) continue;
    if (d.guaranteed !== str(v.guaranteed_gpus)) badVc.push(`${v.name} guaranteed '${d.guaranteed}' API ${v.guaranteed_gpus}`);
    if (d.allocated !== str(v.allocated_gpus)) badVc.push(`${v.name} allocated '${d.allocated}' API ${v.allocated_gpus}`);
    if (d.pending !== str(v.pending_jobs)) badVc.push(`${v.name} pending '${d.pending}' API pending_jobs ${v.pending_jobs}`);
  }
  check('admin vcs: guaranteed, allocated and pending = GET /v1/vcs', badVc.length === 0, badVc.join('; '));
  check('admin vcs: svg#chart-vc-usage', await page.evaluate(`!!document.querySelector('svg#chart-vc-usage')`));
  // guarantees: dashed in the legend as on the chart, each value labelled with every VC at it
  // (equal guarantees draw one line)
  const gv = await page.evaluate(`(() => { const s = document.querySelector('svg#chart-vc-usage');
    return s ? { dashes: s.querySelectorAll('line.key-dash[stroke-dasharray]').length,
      levels: Array.from(s.querySelectorAll('text.level')).map((t) => [t.dataset.level, t.textContent]) } : null; })()`);
  const guaranteed = apiVcs.filter((v) => v.guaranteed_gpus !== null && v.guaranteed_gpus !== undefined);
  check(`admin vcs: the chart's legend draws the ${guaranteed.length} guarantees dashed`, gv && gv.dashes === guaranteed.length, JSON.stringify(gv));
  const badLevels = [];
  for (const g of new Set(guaranteed.map((v) => v.guaranteed_gpus))) {
    const l = gv ? gv.levels.find((x) => x[0] === String(g)) : null;
    const at = guaranteed.filter((v) => v.guaranteed_gpus === g).map((v) => v.name);
    if (!l || !at.every((n) => l[1].includes(n))) badLevels.push(`${g}: ${at.join(',')} -> ${l ? l[1] : 'no label'}`);
  }
  check('admin vcs: each guarantee level labelled with all its VCs', gv && badLevels.length === 0 && gv.levels.length === new Set(guaranteed.map((v) => v.guaranteed_gpus)).size, badLevels.join('; ') || JSON.stringify(gv));
  await settle(page, 'vcs', mark);

  // ---- charts
  mark = await show(page, '#/charts');
  const stats = await api('GET', '/v1/stats?from=-3600', TOK.admin);
  const samples = stats.status === 200 ? JSON.stringify(stats.body).length : 0;
  check('GET /v1/stats answers', stats.status === 200, String(stats.status));
  for (const id of ['chart-alloc', 'chart-pending', 'chart-jobs']) {
    const c = await page.evaluate(`(() => { const s = document.querySelector('svg#${id}');
      return s ? { n: s.querySelectorAll('path, polyline, rect, line, circle').length, text: s.textContent } : null; })()`);
    check(`admin charts: svg#${id} drawn`, c && c.n > 0, c ? `${c.n} shapes` : 'missing');
    // the daemon samples every second here (--stats-interval 1): a chart says nothing is there only if so
    check(`admin charts: svg#${id} shows the samples (not "no samples")`, c && !/no samples/i.test(c.text), `${samples} bytes of /v1/stats; ${c ? c.text.slice(0, 80) : ''}`);
  }
  await settle(page, 'charts', mark);

  // ---- history
  mark = await show(page, '#/history');
  await checkHistory(page, 'admin', TOK.admin, [JOBS.done, JOBS.failed]);
  // its state filter: the rows GET /v1/history?state=F gives
  await page.evaluate(`(() => { const s = document.querySelector('select#history-state');
    s.value = 'F'; s.dispatchEvent(new Event('change', { bubbles: true })); })()`);
  const failed = (await apiJson('/v1/history?state=F', TOK.admin)).jobs.map((j) => String(j.id));
  const filtered = await page
    .waitFor(`(() => { const r = Array.from(document.querySelectorAll('table#history tbody tr[data-job]'));
      return r.length > 0 && r.every((x) => x.dataset.state === 'FAILED') ? r.map((x) => x.dataset.job).join(',') : ''; })()`, READY_MS, 'only FAILED rows')
    .catch((e) => e.message);
  check(`admin history: the state filter FAILED shows GET /v1/history?state=F (${failed.join(',')})`, filtered === failed.join(','), String(filtered));
  await settle(page, 'history', mark);

  // ---- report viewer: a local file, shown sandboxed, nothing uploaded
  mark = await show(page, '#/report');
  const reqMark = page.requests.length;
  await page.setFiles('input#report-file', [REPORT]);
  const shown = await page
    .waitFor(`(() => { const f = document.querySelector('iframe#report-frame'); return !!(f && (f.getAttribute('src') || f.getAttribute('srcdoc'))); })()`, READY_MS, 'iframe#report-frame filled')
    .catch((e) => e.message);
  check('admin report: the chosen report.html fills iframe#report-frame', shown === true, String(shown));
  const sandbox = await page.evaluate(`(() => { const f = document.querySelector('iframe#report-frame'); return f ? f.getAttribute('sandbox') : null; })()`);
  check(`admin report: the frame is sandboxed without scripts (sandbox="${sandbox}")`, sandbox !== null && !/allow-scripts/.test(sandbox));
  // sized to the window: it ends inside it, at most 40 px above its bottom (below the top bar
  // and the toolbar: no page scrolling, no strip of nothing under it)
  const fr = await page.evaluate(`(() => { const f = document.querySelector('iframe#report-frame'); window.scrollTo(0, 0);
    const r = f.getBoundingClientRect();
    return { top: r.top, bottom: r.bottom, h: r.height, vh: window.innerHeight, page: document.documentElement.scrollHeight }; })()`);
  check(`admin report: the frame fills the window's height (${JSON.stringify(fr)})`, fr.bottom <= fr.vh + 1 && fr.bottom >= fr.vh - 40 && fr.page <= fr.vh);
  let texts = [];
  for (let i = 0; i < 40; i++) {
    texts = await page.frameTexts();
    if (texts.some((t, k) => k > 0 && /gsched simulation report/i.test(t.text))) break;
    await sleep(250);
  }
  check('admin report: the report shows in the frame', texts.some((t, k) => k > 0 && /gsched simulation report/i.test(t.text)), texts.map((t) => `${t.url.slice(0, 40)}: ${t.text.slice(0, 60)}`).join(' | '));
  const sent = page.requests.slice(reqMark).filter((r) => r.method !== 'GET' && /^http/.test(r.url));
  check('admin report: nothing uploaded (no request but GETs)', sent.length === 0, JSON.stringify(sent.map((r) => `${r.method} ${r.url}`)));
  await settle(page, 'report', mark);

  // ---- every /v1 call carried the token in its header, none in a URL
  // (/v1/health is the one route served without a token)
  const v1 = page.requests.filter((r) => r.url.startsWith(`${URL0}/v1/`) && !r.url.startsWith(`${URL0}/v1/health`));
  const secret = TOK.admin.split('.')[1];
  check(`admin: the pages' ${v1.length} API calls send Authorization: Bearer`, v1.length > 0 && v1.every((r) => (r.headers.Authorization || r.headers.authorization || '').startsWith('Bearer ')), JSON.stringify(v1.filter((r) => !(r.headers.Authorization || r.headers.authorization)).map((r) => r.url).slice(0, 3)));
  check('admin: no URL carries the token', page.requests.every((r) => !r.url.includes(secret)));
}

// nodeAdmin(page, node): drain the node from its card (in-page reason), check the daemon and
// the map say so, then resume it from the card
async function nodeAdmin(page, node) {
  let mark = await show(page, '#/cluster', 'cluster (node admin)');
  await nodeActions(page, node, ['drain', 'down'], 'in service');
  const why = 'maintenance by the browser test';
  await page.click(`button[data-action=drain][data-node="${node}"]`);
  await page.waitFor(`(() => { const r = document.querySelector('input#node-reason'); return !!(r && r.offsetParent !== null); })()`, READY_MS, 'input#node-reason shown');
  await page.type('input#node-reason', why);
  await page.click('button[data-confirm]');
  const f = await page.waitFor(`(document.getElementById('flash') || {}).textContent`, READY_MS, '#flash after drain').catch((e) => e.message);
  check(`admin map: #flash reports the drain of ${node}`, /drain/i.test(f), f);
  let n = null;
  for (let i = 0; i < 100; i++) {
    n = await apiJson(`/v1/nodes/${node}`, TOK.admin);
    if (n.state === 'draining' || n.state === 'drained') break;
    await sleep(100);
  }
  check(`admin map: the daemon drains ${node} (${n.state}: ${n.reason})`, (n.state === 'draining' || n.state === 'drained') && String(n.reason || '').includes(why));
  const shown = await page
    .waitFor(`(() => { const e = document.querySelector('.node[data-node="${node}"]'); return !!e && e.dataset.state === ${JSON.stringify(n.state)} && (e.getAttribute('title') || '').includes(${JSON.stringify(why)}); })()`, READY_MS, `.node[data-node=${node}][data-state=${n.state}] with the reason as title`)
    .catch((e) => e.message);
  check(`admin map: ${node} shown ${n.state} with its reason`, shown === true, String(shown));
  await nodeActions(page, node, ['down', 'resume'], n.state);
  await settle(page, `cluster-${node}-${n.state}`, mark);

  // the page's summary and legend with the node out of service
  await checkMap(page, 'admin (drained node)', TOK.admin);
  mark = page.problems.length;
  // resume, the mouse held down while events arrive (a job held and released again)
  const other = JOBS.bob_jobs[3];
  await pressThrough(page, `button[data-action=resume][data-node="${node}"]`, async () => {
    await api('POST', `/v1/jobs/${other}/hold`, TOK.admin);
    await api('POST', `/v1/jobs/${other}/release`, TOK.admin);
  });
  for (let i = 0; i < 100; i++) {
    n = await apiJson(`/v1/nodes/${node}`, TOK.admin);
    if (UP_STATES.has(n.state)) break;
    await sleep(100);
  }
  check(`admin map: the daemon resumes ${node} (${n.state})`, UP_STATES.has(n.state));
  const back = await page.waitFor(`(document.querySelector('.node[data-node="${node}"]') || { dataset: {} }).dataset.state === 'up'`, READY_MS, `${node} up again`).catch((e) => e.message);
  check(`admin map: ${node} shown up again`, back === true, String(back));
  await nodeActions(page, node, ['drain', 'down'], 'in service again');
  await settle(page, `cluster-${node}-resumed`, mark);
}

// nodeActions(page, node, want, what): the node card's action buttons are exactly those that apply
async function nodeActions(page, node, want, what) {
  const got = await page.evaluate(`Array.from(document.querySelectorAll('button[data-action][data-node="${node}"]')).map((b) => b.dataset.action).sort()`);
  check(`admin map: ${node} (${what}) offers ${want.join(', ')} only`, got.join(',') === want.slice().sort().join(','), got.join(','));
}

// checkActions(page, who, id, want): the job's action buttons are exactly those its state allows
async function checkActions(page, who, id, want) {
  const got = await page.evaluate(`Array.from(document.querySelectorAll('button[data-action][data-job="${id}"]')).map((b) => b.dataset.action).sort()`);
  check(`${who} job ${id}: actions ${want.join(', ')} only`, got.join(',') === want.slice().sort().join(','), got.join(','));
}

// clickAction(page, selector): click a job or node action button, and the page's in-page
// confirmation (button[data-confirm]) when it asks for one. The click must take: a live
// re-render between press and release must not swallow it (the page holds its refreshes
// while the mouse is down), so there is no second try
const CONFIRM = `(() => { const b = document.querySelector('button[data-confirm]'); return !!(b && b.offsetParent !== null); })()`;
const FLASH = `(document.getElementById('flash') || {}).textContent || ''`;
async function clickAction(page, selector) {
  const before = await page.evaluate(FLASH);
  await page.click(selector);
  const took = await page
    .waitFor(`${CONFIRM} || (${FLASH}) !== ${JSON.stringify(before)}`, 5000, 'a confirmation or a #flash')
    .then(() => true, () => false);
  check(`the click on ${selector} takes (a confirmation or a #flash follows)`, took);
  if (await page.evaluate(CONFIRM)) await page.click('button[data-confirm]');
}

// pressThrough(page, selector, during): press the mouse on a button, run during() (which makes
// the daemon send events: the page re-reads its data) and wait out the page's refresh, then
// release: the button must be the same element (not rebuilt under the mouse) and the click
// must take (the confirmation opens); then confirm
async function pressThrough(page, selector, during) {
  const sel = JSON.stringify(selector);
  const at = await page.evaluate(`(() => { const b = document.querySelector(${sel});
    if (!b) return null;
    b.scrollIntoView({ block: 'center', inline: 'center' });
    b.dataset.pressedByTest = '1';
    const r = b.getBoundingClientRect();
    return { x: r.left + r.width / 2, y: r.top + r.height / 2 }; })()`);
  check(`${selector} there to press`, !!at);
  if (!at) return;
  const base = { x: at.x, y: at.y, button: 'left', clickCount: 1 };
  await page.send('Input.dispatchMouseEvent', { ...base, type: 'mouseMoved', button: 'none' });
  await page.send('Input.dispatchMouseEvent', { ...base, type: 'mousePressed', buttons: 1 });
  const reqs = page.requests.length;
  await during();
  // the event's refresh (400 ms after it) has read the page's data again
  const reread = await (async () => {
    for (let i = 0; i < 40; i++) {
      if (page.requests.slice(reqs).some((r) => r.url.startsWith(`${URL0}/v1/cluster`))) return true;
      await sleep(100);
    }
    return false;
  })();
  await sleep(300); // what a render of that data would take
  const same = await page.evaluate(`(document.querySelector(${sel}) || { dataset: {} }).dataset.pressedByTest === '1'`);
  await page.send('Input.dispatchMouseEvent', { ...base, type: 'mouseReleased', buttons: 0 });
  check(`${selector}: a live refresh while the mouse is down (data re-read: ${reread}) leaves the pressed button in place`, reread && same, `same element: ${same}`);
  const took = await page.waitFor(CONFIRM, 5000, 'the confirmation').then(() => true, () => false);
  check(`${selector}: the click pressed across a live refresh takes (the confirmation opens)`, took);
  if (took) await page.click('button[data-confirm]');
}

// ranges([2,3,5]) -> "2-3,5" (the page's notation)
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

// checkHistory(page, who, token, ids): the rows are GET /v1/history's jobs, ids among them
async function checkHistory(page, who, token, ids) {
  const list = (await apiJson('/v1/history', token)).jobs;
  const rows = await page.evaluate(`Array.from(document.querySelectorAll('table#history tbody tr[data-job]')).map((r) => [r.dataset.job, r.innerText])`);
  const got = rows.map((r) => r[0]);
  const want = list.map((j) => String(j.id));
  check(`${who} history: the rows are GET /v1/history's jobs (${want.join(',')})`, want.length > 0 && got.length === want.length && want.every((id) => got.includes(id)), got.join(','));
  for (const id of ids) check(`${who} history: finished job ${id} listed`, got.includes(String(id)));
  const bad = [];
  for (const j of list) {
    const r = rows.find((x) => x[0] === String(j.id));
    if (r && !(r[1].includes(j.state) && r[1].includes(j.user))) bad.push(`${j.id}: '${r[1].replace(/\s+/g, ' ')}'`);
  }
  check(`${who} history: each row shows its job's state and user`, bad.length === 0, bad.join('; '));
  return got;
}

async function checkQueue(page, who, token) {
  const jobs = (await apiJson('/v1/jobs', token)).jobs;
  const rows = await page.evaluate(READ_QUEUE);
  const ids = rows.map((r) => r.job);
  const pend = jobs.filter((j) => j.state === 'PENDING');
  // an array's pending elements may share a row: tr[data-job=FIRST][data-array=ID][data-count=N]
  const isArr = (j) => j.array_id !== null && j.array_id !== undefined;
  check(`${who} queue: every pending job not in an array has a row (${pend.filter((j) => !isArr(j)).map((j) => j.id).join(',')})`,
    pend.filter((j) => !isArr(j)).every((j) => ids.includes(String(j.id))), ids.join(','));
  const badArr = [];
  for (const a of new Set(pend.filter(isArr).map((j) => j.array_id))) {
    const elems = pend.filter((j) => j.array_id === a);
    const own = rows.filter((r) => r.array === undefined && elems.some((j) => String(j.id) === r.job));
    const merged = rows.filter((r) => r.array === String(a));
    const n = own.length + merged.reduce((k, r) => k + Number(r.count), 0);
    if (n !== elems.length) badArr.push(`array ${a}: ${elems.length} pending elements, rows cover ${n}`);
    for (const r of own) {
      const j = elems.find((x) => String(x.id) === r.job);
      if (!r.text.includes(`${a}_${j.array_task}`)) badArr.push(`row ${r.job} does not say ${a}_${j.array_task}: ${r.text.replace(/\s+/g, ' ')}`);
    }
    for (const r of merged) if (!r.text.includes(`${a}_[`)) badArr.push(`merged row ${r.job} does not say ${a}_[...]: ${r.text.replace(/\s+/g, ' ')}`);
    // a merged row shows all its elements' positions (2-3), not its first one's
    for (const r of merged) {
      if (!r.elems) badArr.push(`merged row ${r.job} without data-elems`);
      const ps = String(r.elems || '').split(',').map((id) => pend.find((j) => String(j.id) === id)).filter((j) => j && j.position).map((j) => j.position);
      if (ps.length > 1 && r.posText !== ranges(ps)) badArr.push(`merged row ${r.job} (${r.elems}) shows POS '${r.posText}', its positions ${ranges(ps)}`);
    }
  }
  check(`${who} queue: an array's pending elements, each in one row (ID_TASK) or merged (ID_[A-B])`, badArr.length === 0, badArr.join('; '));
  const known = new Map(jobs.map((j) => [String(j.id), j]));
  check(`${who} queue: rows only for jobs GET /v1/jobs lists`, ids.every((id) => known.has(id)), ids.filter((id) => !known.has(id)).join(','));
  check(`${who} queue: one row per job`, new Set(ids).size === ids.length, ids.join(','));
  // the API's order: position ascending, jobs without a position after
  const key = (id) => {
    const p = known.get(id) ? known.get(id).position : null;
    return p === null || p === undefined || p === 0 ? Infinity : p;
  };
  const order = ids.map(key);
  const sorted = order.every((p, i) => i === 0 || order[i - 1] <= p);
  check(`${who} queue: rows in position order, unpositioned after`, sorted, ids.map((id) => `${id}@${key(id)}`).join(' '));
  const bad = [];
  for (const r of rows) {
    const j = known.get(r.job);
    if (!j) continue;
    if (r.reason === null) bad.push(`${r.job}: no td.reason`);
    else if (j.state === 'PENDING' && r.reason !== str(j.reason)) bad.push(`${r.job}: td.reason '${r.reason}', API '${str(j.reason)}'`);
    else if (j.state === 'RUNNING' && r.reason !== (j.reason ? `last stop: ${j.reason}` : '')) bad.push(`${r.job} (RUNNING): td.reason '${r.reason}', API '${str(j.reason)}' (a running job's reason is its last stop's)`);
    if (r.pos === null) bad.push(`${r.job}: no td.pos[data-pos]`);
    else if (r.pos !== (j.position ? String(j.position) : '')) bad.push(`${r.job}: data-pos '${r.pos}', API ${j.position}`);
  }
  check(`${who} queue: td.reason and td.pos[data-pos] = the API's reason and position`, bad.length === 0, bad.join('; '));
  return { jobs, rows };
}

async function checkJob(page, who, token, id, opts) {
  const j = (await apiJson(`/v1/jobs/${id}`, token));
  const d = await page.evaluate(`(() => { const j = document.querySelector('#job');
    return j ? { job: j.dataset.job, state: j.dataset.state } : null; })()`);
  check(`${who} job ${id}: #job[data-job][data-state] = ${j.state}`, d && d.job === String(id) && d.state === j.state, JSON.stringify(d));
  const spec = await page.evaluate(`(document.getElementById('job-spec') || {}).textContent || ''`);
  const cmd = Array.isArray(j.spec && j.spec.command) ? j.spec.command[0] : '';
  check(`${who} job ${id}: #job-spec shows the spec`, spec.length > 0 && (!cmd || spec.includes(cmd)), spec.slice(0, 120));
  const evs = (await apiJson(`/v1/jobs/${id}/events`, token)).events || j.events || [];
  const evRows = await page.evaluate(`Array.from(document.querySelectorAll('#job-events tr')).map((r) => r.innerText)`);
  const missing = evs.filter((e) => !evRows.some((t) => t.includes(e.type)));
  check(`${who} job ${id}: #job-events lists its ${evs.length} events (${evs.map((e) => e.type).join(',')})`, evs.length > 0 && missing.length === 0, `missing ${missing.map((e) => e.type).join(',')}; rows ${evRows.length}`);
  check(`${who} job ${id}: #job-log`, await page.evaluate(`!!document.getElementById('job-log')`));
  if (opts.log) {
    const got = await page
      .waitFor(`((document.getElementById('job-log') || {}).textContent || '').includes(${JSON.stringify(opts.log)})`, READY_MS, 'the log tail')
      .catch((e) => e.message);
    check(`${who} job ${id}: #job-log shows the log's tail ('${opts.log}')`, got === true, String(got));
  }
  return j;
}

async function alicePages(browser) {
  const page = await browser.newPage();
  await login(page, TOK.alice, 'alice');
  // her own running job: cancel from the page
  const id = JOBS.cancel;
  let mark = await show(page, `#/job/${id}`);
  await checkJob(page, 'alice', TOK.alice, id, {});
  const sel = `button[data-action=cancel][data-job="${id}"]`;
  check(`alice job ${id}: a cancel button for its owner`, await page.evaluate(`!!document.querySelector('${sel}')`));
  await clickAction(page, sel);
  const flash = await page.waitFor(`(document.getElementById('flash') || {}).textContent`, READY_MS, '#flash after cancel').catch((e) => e.message);
  check(`alice job ${id}: #flash reports the cancel`, /cancel/i.test(flash), flash);
  let st = '';
  for (let i = 0; i < 300; i++) {
    st = (await apiJson(`/v1/jobs/${id}`, TOK.admin)).state;
    if (st === 'CANCELLED') break;
    await sleep(100);
  }
  check(`alice job ${id}: the daemon reports it CANCELLED`, st === 'CANCELLED', st);
  const live = await page.waitFor(`(document.querySelector('#job') || { dataset: {} }).dataset.state === 'CANCELLED'`, READY_MS, 'the page shows CANCELLED').catch((e) => e.message);
  check(`alice job ${id}: the page shows it CANCELLED`, live === true, String(live));
  await settle(page, `job-${id}-cancelled`, mark);

  // her map: her own jobs only
  await stable();
  mark = await show(page, '#/cluster');
  await checkMap(page, 'alice', TOK.alice);
  await settle(page, 'alice-cluster', mark);
}

async function bobPages(browser) {
  await stable();
  const page = await browser.newPage();
  await login(page, TOK.bob, 'bob');
  let mark = await show(page, '#/cluster');
  const { dom } = await checkMap(page, 'bob', TOK.bob);
  const others = dom.gpus.filter((c) => c.job && c.job !== '' && !JOBS.bob_jobs.includes(Number(c.job)));
  check("bob map: no cell names another user's job", others.length === 0, others.map((c) => `${c.node}/${c.gpu}=${c.job}`).join(' '));
  check("bob map: no cell title names alice", dom.gpus.every((c) => !/alice/.test(c.title)), dom.gpus.filter((c) => /alice/.test(c.title)).map((c) => c.title).join(' | '));
  // the same job, the same colour as in the admin's view
  const mine = colours(dom);
  const diff = [...mine.entries()].filter(([k, s]) => k !== '' && jobColours.has(k) && jobColours.get(k) !== [...s][0]);
  check("bob map: his jobs have the colours the admin's map gave them", diff.length === 0, diff.map(([k, s]) => `${k}:${[...s][0]} vs ${jobColours.get(k)}`).join(' '));
  check('bob map: nothing of alice in the page text', !/alice/.test(dom.text));
  const nodeButtons = await page.evaluate(`document.querySelectorAll('button[data-action][data-node]').length`);
  check('bob map: no node actions for a user', nodeButtons === 0, `${nodeButtons} buttons`);
  await settle(page, 'bob-cluster', mark);

  mark = await show(page, '#/queue');
  const { rows } = await checkQueue(page, 'bob', TOK.bob);
  check(`bob queue: only his jobs (${JOBS.bob_jobs.join(',')})`, rows.length > 0 && rows.every((r) => JOBS.bob_jobs.includes(Number(r.job))), rows.map((r) => r.job).join(','));
  check('bob queue: nothing of alice in the page text', !(await page.evaluate(`document.body.innerText`)).includes('alice'));
  await settle(page, 'bob-queue', mark);

  // alice's job: not found for bob, no buttons
  const other = JOBS.running_alice;
  await page.goto('about:blank');
  mark = page.problems.length;
  await page.goto(`${URL0}/#/job/${other}`);
  const err = await page.waitFor(`(document.getElementById('error') || {}).textContent`, READY_MS, "#error on another user's job").catch((e) => e.message);
  check(`bob job ${other} (alice's): #error says it is not found`, /404|not found|no job/i.test(err), err);
  const leaked = await page.evaluate(`({ buttons: document.querySelectorAll('button[data-action][data-job]').length,
    state: (document.querySelector('#job') || { dataset: {} }).dataset.state || '', text: document.body.innerText })`);
  check(`bob job ${other}: no action buttons, no state`, leaked.buttons === 0 && leaked.state === '', JSON.stringify({ b: leaked.buttons, s: leaked.state }));
  check(`bob job ${other}: nothing of alice in the page text`, !leaked.text.includes('alice'));
  await settle(page, `bob-job-${other}-denied`, mark, { errorExpected: true, allow: (p) => /404|Not Found/.test(p.text) });

  // his own job: his buttons
  mark = await show(page, `#/job/${JOBS.bob_running}`);
  await checkJob(page, 'bob', TOK.bob, JOBS.bob_running, {});
  await checkActions(page, 'bob', JOBS.bob_running, ['cancel', 'requeue']);
  await settle(page, `bob-job-${JOBS.bob_running}`, mark);

  mark = await show(page, '#/history');
  const hist = await checkHistory(page, 'bob', TOK.bob, [JOBS.failed]);
  check("bob history: not alice's finished job", !hist.includes(String(JOBS.done)));
  check('bob history: nothing of alice in the page text', !(await page.evaluate(`document.body.innerText`)).includes('alice'));
  await settle(page, 'bob-history', mark);

  mark = await show(page, '#/vcs');
  const apiVcs = (await apiJson('/v1/vcs', TOK.bob)).vcs;
  const domVcs = await page.evaluate(READ_VCS);
  check('bob vcs: the rows GET /v1/vcs gives him', domVcs.length === apiVcs.length && domVcs.every((d) => apiVcs.some((v) => v.name === d.vc && str(v.allocated_gpus) === d.allocated)), JSON.stringify(domVcs));
  await settle(page, 'bob-vcs', mark);

  // last (it changes what runs): his running job, requeued from its page: the daemon stops it
  // (checkpoint protocol) and queues it again
  mark = await show(page, `#/job/${JOBS.bob_running}`);
  await clickAction(page, `button[data-action=requeue][data-job="${JOBS.bob_running}"]`);
  const qflash = await page.waitFor(`(document.getElementById('flash') || {}).textContent`, READY_MS, '#flash after requeue').catch((e) => e.message);
  check(`bob job ${JOBS.bob_running}: #flash reports the requeue`, /requeue/i.test(qflash), qflash);
  let requeued = null;
  for (let i = 0; i < 300 && !requeued; i++) {
    const evs = (await apiJson(`/v1/jobs/${JOBS.bob_running}/events`, TOK.admin)).events || [];
    requeued = evs.find((e) => /requeued by bob/.test(e.reason || ''));
    if (!requeued) await sleep(100);
  }
  check(`bob job ${JOBS.bob_running}: the daemon requeued it (event '${requeued ? requeued.type : ''}: requeued by bob')`, !!requeued);
  // running again: its reason (the requeue's) is labelled as its last stop's, on its page
  let rj = null;
  for (let i = 0; i < 100; i++) {
    rj = await apiJson(`/v1/jobs/${JOBS.bob_running}`, TOK.bob);
    if (rj.state === 'RUNNING' && rj.runs > 1) break;
    await sleep(100);
  }
  if (rj.state === 'RUNNING' && rj.reason) {
    const dts = await page.waitFor(`(() => { const d = Array.from(document.querySelectorAll('#job dl.kv dt')).map((x) => x.textContent);
      return document.querySelector('#job').dataset.state === 'RUNNING' && d.includes('last stop') && !d.includes('reason') ? d.join(',') : ''; })()`, READY_MS, 'the requeued job running, "last stop"')
      .catch((e) => e.message);
    check(`bob job ${JOBS.bob_running}: running again, its reason '${rj.reason}' shown as "last stop"`, /last stop/.test(dts), dts);
  }
  await settle(page, `bob-job-${JOBS.bob_running}-requeued`, mark);

  // live: his queue page, left open, shows a job he submits meanwhile within 4 s (the page
  // reads the event stream, GET /v1/events with his token, and re-reads on its events)
  mark = await show(page, '#/queue', 'bob queue (live)');
  const streams = page.requests.filter((r) => r.url.startsWith(`${URL0}/v1/events`));
  check('bob: the pages read the event stream with his token', streams.length > 0 && streams.every((r) => (r.headers.Authorization || '') === `Bearer ${TOK.bob}`), `${streams.length} requests`);
  await sleep(500); // the stream is connected
  const sub = await api('POST', '/v1/jobs', TOK.bob, { name: 'live', vc: 'prod', gpus: 4, command: ['sleep', '600'] });
  check('bob: a new job submitted through the API', sub.status === 201 || sub.status === 202 || sub.status === 200, `${sub.status} ${JSON.stringify(sub.body).slice(0, 200)}`);
  const newId = sub.body && (sub.body.id || (sub.body.job && sub.body.job.id));
  const t0 = Date.now();
  const seen = await page.waitFor(`!!document.querySelector('table#queue tbody tr[data-job="${newId}"]')`, 4000, `job ${newId}'s row`).catch((e) => e.message);
  check(`bob queue: the new job ${newId} appears by itself within 4 s (${Date.now() - t0} ms)`, seen === true, String(seen));
  // the requeued job, running again: its row's reason is its last stop's, labelled so
  rj = await apiJson(`/v1/jobs/${JOBS.bob_running}`, TOK.bob);
  if (rj.state === 'RUNNING' && rj.reason) {
    const want = `last stop: ${rj.reason}`;
    const got = await page.waitFor(`(() => { const r = document.querySelector('table#queue tbody tr[data-job="${JOBS.bob_running}"] td.reason');
      return !!r && r.textContent === ${JSON.stringify(want)}; })()`, 4000, `job ${JOBS.bob_running}'s td.reason '${want}'`)
      .catch((e) => e.message);
    check(`bob queue: running job ${JOBS.bob_running}'s td.reason reads '${want}'`, got === true, String(got));
  }
  await settle(page, 'bob-queue-live', mark);
}

const watchdog = setTimeout(() => {
  console.log('not ok - the browser test did not end within its 420 s bound');
  try {
    const pid = Number(fs.readFileSync(path.join(TMP, 'chromium.pid'), 'utf8'));
    process.kill(-pid, 'SIGKILL');
  } catch (e) {
    /* gone */
  }
  process.exit(1);
}, 420000);

main()
  .catch((e) => check('the browser test ran to its end', false, e.stack || e.message))
  .then(() => {
    clearTimeout(watchdog);
    console.log(`${pass} passed, ${fail} failed`);
    process.exit(fail ? 1 : 0);
  });
