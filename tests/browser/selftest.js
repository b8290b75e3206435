// Self-test of the CDP driver (cdp.js) on a local page: what the dashboard test relies on must
// be able to fail. A click is a trusted mouse event and is refused on a covered element; console
// errors, uncaught exceptions and failed loads are collected; waits end by themselves; the
// screenshot is a PNG of the page's size; close() leaves no chromium process behind.
// usage: node selftest.js TMPDIR        (prints TAP-like lines, exits 1 on any failure)
'use strict';

const fs = require('fs');
const path = require('path');
const cdp = require('./cdp.js');

const tmp = process.argv[2];
if (!tmp) {
  console.error('usage: node selftest.js TMPDIR');
  process.exit(2);
}
let pass = 0;
let fail = 0;
const check = (name, cond, detail = '') => {
  if (cond) {
    pass++;
    console.log(`ok - ${name}`);
  } else {
    fail++;
    console.log(`not ok - ${name}${detail ? ': ' + detail : ''}`);
  }
};
// throws(name, promise, pattern): the promise must reject with a message matching pattern
async function throws(name, p, pattern) {
  try {
    await p;
    check(name, false, 'did not throw');
  } catch (e) {
    check(name, pattern.test(e.message), e.message);
  }
}

const html = `<!doctype html><html><head><title>selftest</title>
<style>
  #cover { position: relative; display: inline-block; }
  #overlay { position: absolute; left: 0; top: 0; width: 100%; height: 100%; }
  body { margin: 0; }
  #tall { height: 1500px; background: linear-gradient(#fff, #00f); }
</style></head><body>
<button id="b">count</button>
<div id="cover"><button id="covered">under</button><div id="overlay"></div></div>
<input id="t">
<button id="err">error</button><button id="throw">throw</button>
<button id="img">broken image</button>
<button id="hidden" style="display:none">hidden</button>
<input id="f" type="file"><span id="fname"></span>
<iframe id="fr" sandbox srcdoc="<p>inside the sandboxed frame</p>"></iframe>
<div id="tall"></div>
<script>
  let n = 0;
  document.getElementById('b').addEventListener('click', (e) => {
    n++;
    document.body.dataset.n = n;
    document.body.dataset.trusted = e.isTrusted ? '1' : '0';
  });
  document.getElementById('covered').addEventListener('click', () => { document.body.dataset.covered = 'clicked'; });
  document.getElementById('err').addEventListener('click', () => console.error('selftest-error', 42));
  document.getElementById('throw').addEventListener('click', () => { throw new Error('selftest-throw'); });
  document.getElementById('img').addEventListener('click', () => {
    const i = document.createElement('img');
    i.src = 'no-such-image.png';
    document.body.appendChild(i);
  });
  document.getElementById('f').addEventListener('change', (e) => {
    document.getElementById('fname').textContent = e.target.files[0].name;
  });
  setTimeout(() => { document.body.dataset.late = 'yes'; }, 300);
</script></body></html>`;

(async () => {
  fs.mkdirSync(tmp, { recursive: true });
  const file = path.join(tmp, 'page.html');
  fs.writeFileSync(file, html);
  const watchdog = setTimeout(() => {
    console.log('not ok - the self-test did not end within 90 s');
    if (browser) browser.kill();
    process.exit(1);
  }, 90000);
  let browser = null;
  try {
    browser = await cdp.launch({
      userDataDir: path.join(tmp, 'profile'),
      pidFile: path.join(tmp, 'chromium.pid'),
    });
    check(`chromium started (${browser.version})`, /Chrom/.test(browser.version || ''));
    const page = await browser.newPage({ width: 800, height: 600 });
    await page.goto('file://' + file);
    check('evaluate returns values', (await page.evaluate('document.title')) === 'selftest');
    check(
      'evaluate awaits promises',
      (await page.evaluate('new Promise(r => setTimeout(() => r(7), 50))')) === 7
    );
    await throws('evaluate reports page exceptions', page.evaluate('nosuchname.x'), /nosuchname/);
    await page.click('#b');
    await page.click('#b');
    check('click is a real mouse click', (await page.evaluate('document.body.dataset.n')) === '2');
    check('... a trusted event', (await page.evaluate('document.body.dataset.trusted')) === '1');
    await throws('click refuses a covered element', page.click('#covered'), /covered by/);
    check('... and did not click it', (await page.evaluate('document.body.dataset.covered')) === undefined);
    await throws('click refuses an invisible element', page.click('#hidden'), /not visible/);
    await throws('click refuses a missing element', page.click('#nope'), /no element/);
    await page.type('#t', 'héllo');
    check('type enters text', (await page.evaluate("document.getElementById('t').value")) === 'héllo');
    check('waitFor returns once true', (await page.waitFor('document.body.dataset.late', 3000)) === 'yes');
    const t0 = Date.now();
    await throws('waitFor ends by itself', page.waitFor('false', 500, 'never'), /timed out after 500 ms waiting for never/);
    check('... within its bound', Date.now() - t0 < 3000, `${Date.now() - t0} ms`);
    check('no problems on a clean page', page.problems.length === 0, JSON.stringify(page.problems));
    await page.click('#err');
    await page.click('#throw');
    await page.click('#img');
    await page.waitFor('document.querySelector("img") && document.querySelector("img").complete', 3000);
    await cdp.sleep(300); // events arrive after the evaluate replies
    const kinds = page.problems.map((p) => p.kind);
    check(
      'console.error is collected',
      page.problems.some((p) => p.kind === 'console.error' && /selftest-error 42/.test(p.text)),
      JSON.stringify(page.problems)
    );
    check(
      'uncaught exceptions are collected',
      page.problems.some((p) => p.kind === 'exception' && /selftest-throw/.test(p.text)),
      kinds.join(',')
    );
    check(
      'failed loads are collected',
      page.problems.some((p) => /^log\./.test(p.kind) && /no-such-image|ERR_FILE_NOT_FOUND/.test(p.text + p.url)),
      JSON.stringify(page.problems)
    );
    check(
      'requests are collected',
      page.requests.some((r) => r.method === 'GET' && /no-such-image\.png$/.test(r.url)),
      JSON.stringify(page.requests.map((r) => r.url))
    );
    await page.setFiles('#f', [file]);
    check(
      'setFiles picks a local file',
      (await page.waitFor("document.getElementById('fname').textContent", 3000)) === 'page.html'
    );
    const texts = await page.frameTexts();
    check(
      'frameTexts reads a sandboxed frame',
      texts.length === 2 && /inside the sandboxed frame/.test(texts[1].text) && /count/.test(texts[0].text),
      JSON.stringify(texts).slice(0, 300)
    );
    const png = path.join(tmp, 'shot.png');
    await page.screenshot(png);
    const buf = fs.readFileSync(png);
    const sig = buf.subarray(0, 8).toString('hex') === '89504e470d0a1a0a';
    check('screenshot is a PNG', sig);
    const w = buf.readUInt32BE(16);
    const h = buf.readUInt32BE(20);
    check('... of the whole page (800 wide, taller than the window)', w === 800 && h > 1500, `${w}x${h}`);
    const pid = browser.pid;
    await browser.close();
    let alive = true;
    for (let i = 0; i < 50 && alive; i++) {
      try {
        process.kill(pid, 0);
        await cdp.sleep(100);
      } catch (e) {
        alive = false;
      }
    }
    check('close() ends chromium', !alive);
    await throws('a closed browser refuses commands', browser.send('Browser.getVersion'), /not running/);
  } catch (e) {
    check('self-test ran to its end', false, e.stack || e.message);
    if (browser) browser.kill();
  }
  clearTimeout(watchdog);
  console.log(`${pass} passed, ${fail} failed`);
  process.exit(fail ? 1 : 0);
})();
