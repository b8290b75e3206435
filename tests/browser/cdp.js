// A small Chrome DevTools Protocol driver for the browser tests (no npm package).
//
// It starts a headless chromium with --remote-debugging-pipe: the browser reads commands from
// its fd 3 and writes replies and events to its fd 4, each message one JSON text ended by a
// NUL byte. A Page is one tab attached in "flatten" mode (its messages carry a sessionId on
// the same pipe). What it offers the tests: navigate (bounded wait for the load event),
// evaluate (awaits promises, returns values), waitFor (polls an expression, bounded),
// click (a real mouse click at the element's centre, refused when another element covers it),
// screenshots (PNG, whole page), and every console error, uncaught exception and browser log
// error of the page, collected as they come (page.problems), as are the requests it sends
// (page.requests: method, URL, headers).
//
// Invariants: every wait is bounded (a command that gets no reply rejects after its timeout;
// a browser that exits rejects every pending command); close() ends the browser by its pid
// (and its process group, which launch() created for it) whatever state it is in; nothing here
// reads the network but the page's own loads.
'use strict';

const { spawn } = require('child_process');
const fs = require('fs');
const path = require('path');

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// The chromium executable: $CHROMIUM, else the first of the usual names on PATH; null if none.
function findChromium() {
  if (process.env.CHROMIUM) return process.env.CHROMIUM;
  const names = ['chromium', 'chromium-browser', 'google-chrome', 'chrome'];
  for (const dir of (process.env.PATH || '').split(':')) {
    for (const n of names) {
      const p = path.join(dir || '.', n);
      try {
        fs.accessSync(p, fs.constants.X_OK);
        return p;
      } catch (e) {
        /* next */
      }
    }
  }
  return null;
}

class Browser {
  constructor(proc, opts) {
    this.proc = proc;
    this.pid = proc.pid;
    this.timeoutMs = opts.timeoutMs || 15000;
    this.nextId = 1;
    this.pending = new Map(); // id -> {resolve, reject, timer, method}
    this.listeners = []; // {method, sessionId|null, fn}
    this.exited = false;
    this.buf = Buffer.alloc(0);
    this.out = proc.stdio[3]; // our writes: the browser's fd 3
    this.in = proc.stdio[4]; // its fd 4: our reads
    this.in.on('data', (chunk) => this._data(chunk));
    this.in.on('error', () => {});
    this.out.on('error', () => {});
    proc.on('exit', (code, sig) => {
      this.exited = true;
      const why = new Error(`chromium exited (${sig || code})`);
      for (const p of this.pending.values()) {
        clearTimeout(p.timer);
        p.reject(why);
      }
      this.pending.clear();
    });
  }

  _data(chunk) {
    this.buf = Buffer.concat([this.buf, chunk]);
    let nul;
    while ((nul = this.buf.indexOf(0)) >= 0) {
      const text = this.buf.subarray(0, nul).toString('utf8');
      this.buf = this.buf.subarray(nul + 1);
      let msg;
      try {
        msg = JSON.parse(text);
      } catch (e) {
        continue; // not ours to judge: the protocol only sends JSON
      }
      this._message(msg);
    }
  }

  _message(msg) {
    if (msg.id !== undefined) {
      const p = this.pending.get(msg.id);
      if (!p) return;
      this.pending.delete(msg.id);
      clearTimeout(p.timer);
      if (msg.error) p.reject(new Error(`${p.method}: ${msg.error.message} (${msg.error.code})`));
      else p.resolve(msg.result || {});
      return;
    }
    for (const l of this.listeners.slice()) {
      if (l.method === msg.method && (l.sessionId === null || l.sessionId === msg.sessionId))
        l.fn(msg.params || {}, msg.sessionId);
    }
  }

  // send(method, params, sessionId, timeoutMs): the result object, or a rejection (protocol
  // error, timeout, browser gone)
  send(method, params = {}, sessionId = undefined, timeoutMs = this.timeoutMs) {
    if (this.exited) return Promise.reject(new Error(`${method}: chromium is not running`));
    const id = this.nextId++;
    const msg = { id, method, params };
    if (sessionId) msg.sessionId = sessionId;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`${method}: no reply within ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(id, { resolve, reject, timer, method });
      this.out.write(JSON.stringify(msg) + '\0');
    });
  }

  // on(method, fn, sessionId): call fn(params, sessionId) on every such event; returns a
  // function that removes the listener
  on(method, fn, sessionId = null) {
    const l = { method, sessionId, fn };
    this.listeners.push(l);
    return () => {
      const i = this.listeners.indexOf(l);
      if (i >= 0) this.listeners.splice(i, 1);
    };
  }

  // once(method, sessionId, timeoutMs, pred): the next such event's params (that pred accepts)
  once(method, sessionId, timeoutMs, pred = () => true) {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        off();
        reject(new Error(`no ${method} within ${timeoutMs} ms`));
      }, timeoutMs);
      const off = this.on(
        method,
        (p) => {
          if (!pred(p)) return;
          clearTimeout(timer);
          off();
          resolve(p);
        },
        sessionId
      );
    });
  }

  async newPage(opts = {}) {
    const width = opts.width || 1366;
    const height = opts.height || 768;
    const { targetId } = await this.send('Target.createTarget', { url: 'about:blank' });
    const { sessionId } = await this.send('Target.attachToTarget', { targetId, flatten: true });
    const page = new Page(this, targetId, sessionId);
    await page.init(width, height);
    return page;
  }

  // close(): ask the browser to quit, then make sure: SIGKILL its process group and its pid
  async close() {
    if (!this.exited) {
      try {
        await this.send('Browser.close', {}, undefined, 3000);
      } catch (e) {
        /* killed below */
      }
      for (let i = 0; i < 50 && !this.exited; i++) await sleep(100);
    }
    this.kill();
  }

  kill() {
    for (const target of [-this.pid, this.pid]) {
      try {
        process.kill(target, 'SIGKILL');
      } catch (e) {
        /* already gone */
      }
    }
  }
}

class Page {
  constructor(browser, targetId, sessionId) {
    this.browser = browser;
    this.targetId = targetId;
    this.sessionId = sessionId;
    // console errors, uncaught exceptions, browser log errors, failed loads, in order:
    // {kind, text, url}
    this.problems = [];
    // every request the page sent: {method, url, headers}
    this.requests = [];
    // frames chromium runs in processes of their own (e.g. sandboxed iframes): their sessions
    this.children = new Map(); // sessionId -> targetInfo
  }

  send(method, params = {}, timeoutMs) {
    return this.browser.send(method, params, this.sessionId, timeoutMs);
  }

  on(method, fn) {
    return this.browser.on(method, fn, this.sessionId);
  }

  async init(width, height) {
    this.on('Runtime.consoleAPICalled', (p) => {
      if (p.type !== 'error' && p.type !== 'assert') return;
      const text = (p.args || [])
        .map((a) => (a.value !== undefined ? String(a.value) : a.description || a.type))
        .join(' ');
      const f = p.stackTrace && p.stackTrace.callFrames[0];
      this.problems.push({ kind: `console.${p.type}`, text, url: f ? f.url : '' });
    });
    this.on('Runtime.exceptionThrown', (p) => {
      const d = p.exceptionDetails || {};
      const text = (d.exception && d.exception.description) || d.text || 'exception';
      this.problems.push({ kind: 'exception', text, url: d.url || '' });
    });
    this.on('Log.entryAdded', (p) => {
      const e = p.entry || {};
      if (e.level !== 'error') return;
      this.problems.push({ kind: `log.${e.source}`, text: e.text, url: e.url || '' });
    });
    this.on('Network.requestWillBeSent', (p) => {
      const r = p.request || {};
      this.requests.push({ method: r.method, url: r.url, headers: r.headers || {} });
    });
    this.on('Target.attachedToTarget', (p) => {
      this.children.set(p.sessionId, p.targetInfo);
      // the child waits for nothing (waitForDebuggerOnStart false); its problems count too
      this.browser.on('Runtime.exceptionThrown', (q) => {
        const d = q.exceptionDetails || {};
        this.problems.push({ kind: 'exception', text: d.text || 'exception', url: d.url || '' });
      }, p.sessionId);
      this.browser.send('Runtime.enable', {}, p.sessionId).catch(() => {});
    });
    this.on('Target.detachedFromTarget', (p) => this.children.delete(p.sessionId));
    await this.send('Target.setAutoAttach', {
      autoAttach: true,
      waitForDebuggerOnStart: false,
      flatten: true,
    });
    await this.send('Network.enable');
    await this.send('Page.enable');
    await this.send('Runtime.enable');
    await this.send('Log.enable');
    await this.send('Emulation.setDeviceMetricsOverride', {
      width,
      height,
      deviceScaleFactor: 1,
      mobile: false,
    });
  }

  // goto(url): navigate and wait (bounded) for the load event; a navigation that only changes
  // the fragment fires none, so go through about:blank first for a fresh load of a page
  async goto(url, timeoutMs = 15000) {
    const loaded = this.browser.once('Page.loadEventFired', this.sessionId, timeoutMs);
    const r = await this.send('Page.navigate', { url }, timeoutMs);
    if (r.errorText) {
      loaded.catch(() => {});
      throw new Error(`navigate ${url}: ${r.errorText}`);
    }
    await loaded;
  }

  // evaluate(expr): the expression's value (promises awaited, returned by value); throws with
  // the page's exception text
  async evaluate(expression, timeoutMs = 15000) {
    const r = await this.send(
      'Runtime.evaluate',
      { expression, awaitPromise: true, returnByValue: true, userGesture: true },
      timeoutMs
    );
    if (r.exceptionDetails) {
      const d = r.exceptionDetails;
      throw new Error(`evaluate: ${(d.exception && d.exception.description) || d.text}`);
    }
    return r.result ? r.result.value : undefined;
  }

  // waitFor(expr, timeoutMs, what): poll until the expression is truthy; returns its value;
  // throws naming `what` (and the last error of the expression, if any) on timeout
  async waitFor(expression, timeoutMs = 10000, what = expression) {
    const end = Date.now() + timeoutMs;
    let last = '';
    for (;;) {
      try {
        const v = await this.evaluate(expression, Math.max(1000, end - Date.now()));
        if (v) return v;
        last = '';
      } catch (e) {
        last = `: ${e.message}`;
      }
      if (Date.now() >= end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last}`);
      await sleep(50);
    }
  }

  // click(selector): scroll the element into view and click its centre with the mouse (as a
  // user would: the element must be visible and on top there)
  async click(selector) {
    const sel = JSON.stringify(selector);
    const at = await this.evaluate(`(() => {
      const el = document.querySelector(${sel});
      if (!el) return { error: 'no element ' + ${sel} };
      el.scrollIntoView({ block: 'center', inline: 'center' });
      const r = el.getBoundingClientRect();
      if (r.width === 0 || r.height === 0) return { error: ${sel} + ' is not visible' };
      const x = r.left + r.width / 2, y = r.top + r.height / 2;
      const hit = document.elementFromPoint(x, y);
      if (!hit || !(hit === el || el.contains(hit)))
        return { error: ${sel} + ' is covered by ' + (hit ? hit.outerHTML.slice(0, 80) : 'nothing') };
      return { x, y };
    })()`);
    if (at.error) throw new Error(`click: ${at.error}`);
    const base = { x: at.x, y: at.y, button: 'left', clickCount: 1 };
    await this.send('Input.dispatchMouseEvent', { ...base, type: 'mouseMoved', button: 'none' });
    await this.send('Input.dispatchMouseEvent', { ...base, type: 'mousePressed', buttons: 1 });
    await this.send('Input.dispatchMouseEvent', { ...base, type: 'mouseReleased', buttons: 0 });
  }

  // type(selector, text): focus the element and type the text (real key input)
  async type(selector, text) {
    const sel = JSON.stringify(selector);
    const ok = await this.evaluate(`(() => {
      const el = document.querySelector(${sel});
      if (!el) return false;
      el.focus();
      return document.activeElement === el;
    })()`);
    if (!ok) throw new Error(`type: cannot focus ${selector}`);
    await this.send('Input.insertText', { text });
  }

  // setFiles(selector, files): choose local files in an <input type=file> (as a user picking
  // them; the page gets its change event)
  async setFiles(selector, files) {
    const { root } = await this.send('DOM.getDocument', { depth: 0 });
    const { nodeId } = await this.send('DOM.querySelector', { nodeId: root.nodeId, selector });
    if (!nodeId) throw new Error(`setFiles: no element ${selector}`);
    await this.send('DOM.setFileInputFiles', { nodeId, files });
  }

  // frameTexts(): the text of every frame's document, frames included that the page's own
  // script cannot read (sandboxed, other origin) and those chromium runs in processes of their
  // own (attached automatically): [{url, text}], the top document first
  async frameTexts() {
    const out = [];
    const walk = (node, acc) => {
      if (node.nodeType === 3) acc.push(node.nodeValue);
      for (const c of node.children || []) walk(c, acc);
      if (node.contentDocument) doc(node.contentDocument);
      for (const c of node.shadowRoots || []) walk(c, acc);
    };
    const doc = (d) => {
      const acc = [];
      const entry = { url: d.documentURL || '', text: '' };
      out.push(entry);
      walk(d, acc);
      entry.text = acc.join(' ');
    };
    for (const sid of [this.sessionId, ...this.children.keys()]) {
      const { root } = await this.browser.send('DOM.getDocument', { depth: -1, pierce: true }, sid);
      doc(root);
    }
    return out;
  }

  // screenshot(file): a PNG of the whole page (at most maxHeight CSS pixels tall)
  async screenshot(file, maxHeight = 4000) {
    const m = await this.send('Page.getLayoutMetrics');
    const size = m.cssContentSize || m.contentSize;
    const vp = m.cssLayoutViewport || m.layoutViewport;
    const width = Math.max(vp.clientWidth, Math.ceil(size.width));
    const height = Math.min(maxHeight, Math.max(vp.clientHeight, Math.ceil(size.height)));
    const r = await this.send(
      'Page.captureScreenshot',
      {
        format: 'png',
        captureBeyondViewport: true,
        clip: { x: 0, y: 0, width, height, scale: 1 },
      },
      30000
    );
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, Buffer.from(r.data, 'base64'));
    return file;
  }

  // problems since index `from` (what the page reported after a given point)
  problemsSince(from) {
    return this.problems.slice(from);
  }
}

// launch({executable, userDataDir, timeoutMs, logFile, pidFile}): a running headless chromium
// (its stdout and stderr go to logFile, default userDataDir/chromium.log)
async function launch(opts = {}) {
  const exe = opts.executable || findChromium();
  if (!exe) throw new Error('no chromium found (set CHROMIUM)');
  if (!opts.userDataDir) throw new Error('launch: userDataDir is required');
  fs.mkdirSync(opts.userDataDir, { recursive: true });
  const args = [
    '--headless',
    '--no-sandbox', // CI runs as root, where chromium's sandbox cannot start
    '--disable-gpu',
    '--remote-debugging-pipe',
    `--user-data-dir=${opts.userDataDir}`,
    '--no-first-run',
    '--no-default-browser-check',
    '--disable-extensions',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--metrics-recording-only',
    '--mute-audio',
    '--hide-scrollbars',
    '--force-color-profile=srgb',
    'about:blank',
  ];
  const log = fs.openSync(opts.logFile || path.join(opts.userDataDir, 'chromium.log'), 'a');
  const proc = spawn(exe, args, {
    stdio: ['ignore', log, log, 'pipe', 'pipe'],
    detached: true, // its own process group: close() kills all of it
  });
  fs.closeSync(log);
  // a pid file lets the calling script end chromium even if this process is killed first
  if (opts.pidFile) fs.writeFileSync(opts.pidFile, `${proc.pid}\n`);
  const browser = new Browser(proc, opts);
  const started = await Promise.race([
    browser.send('Browser.getVersion', {}, undefined, opts.startTimeoutMs || 30000).then((v) => v),
    new Promise((_, reject) => proc.once('error', reject)),
  ]).catch((e) => {
    browser.kill();
    throw new Error(`chromium did not start: ${e.message}`);
  });
  browser.version = started.product;
  return browser;
}

module.exports = { launch, findChromium, sleep, Browser, Page };
