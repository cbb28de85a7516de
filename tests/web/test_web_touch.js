#!/usr/bin/env node
/* test_web_touch.js — the web page by touch alone, on a phone and a tablet (issue 35).
 *
 *   node tests/web/test_web_touch.js BUILD_WEB [--shots DIR]
 *
 * Serves BUILD_WEB (`make web`'s site) as test_web.js does and opens it in
 * Debian's headless Chromium as a phone (390 × 844 CSS px, 3 device pixels
 * a CSS px) and a tablet (820 × 1180, 2), with touch events only
 * (puppeteer's touchscreen: CDP's Input.dispatchTouchEvent), on the threaded
 * build. On each:
 *   - every button of the page's bar is on screen;
 *   - the lesson list opens from the toolbar, shows whole titles, scrolls under
 *     a finger without opening a lesson, and closes with ✕ and with a tap outside it;
 *   - lesson 4 opens from it, under the picture (portrait); a tap on "▼ more
 *     below" pages its text down, a finger drags it up to the choices and Check; a drag that starts on a choice ticks
 *     nothing, taps tick the right ones, Check says "Right.";
 *   - step 2's picture keeps cells of at least 32 CSS px; a tap on a cell picks
 *     it and its explanation leaves when the finger lifts;
 *   - presenter mode from the toolbar's "⋯" hides the page's bar.
 * With --shots DIR, a PNG of each screen with lesson 4 open (steps 1 and 2) goes into DIR.
 * Exit 0 when every check passes, 1 with one line per failure, 2 when it cannot run. */
'use strict';

const { spawn } = require('child_process');
const fs = require('fs');
const path = require('path');
const puppeteer = require('puppeteer-core');

const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const TIMEOUT_MS = 60000;
const SCREENS = [{ name: 'phone', width: 390, height: 844, deviceScaleFactor: 3 },
                 { name: 'tablet', width: 820, height: 1180, deviceScaleFactor: 2 }];

function die(msg) {
  console.error('test_web_touch: ' + msg);
  process.exit(2);
}

/* python3 -m http.server on a free port (as test_web.js) */
function serve(dir) {
  return new Promise((resolve, reject) => {
    const py = spawn('python3', ['-u', '-m', 'http.server', '-b', '127.0.0.1', '-d', dir, '0'],
                     { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    py.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/port (\d+)/);
      if (m) resolve({ py, url: 'http://127.0.0.1:' + m[1] + '/' });
    });
    py.on('exit', (code) => reject(new Error('http.server ended (' + code + '): ' + out)));
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/* The page under a finger: texts' boxes are in device pixels, the finger in CSS pixels. */
class Finger {
  constructor(page, dpr) { this.page = page; this.dpr = dpr; }

  stats() { return this.page.evaluate(() => window.attnlabStats); }

  /* fn (an input), then its frame and the work it started */
  async act(fn) {
    const n = await this.page.evaluate(() => window.attnlabStats.frames);
    await fn();
    await this.page.waitForFunction((m) => window.attnlabStats.frames > m, { timeout: 1500 }, n).catch(() => null);
    await this.page.waitForFunction(() => !window.attnlabStats.pending, { timeout: 20000 }).catch(() => null);
    await this.page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  }

  tap(x, y) { return this.act(() => this.page.touchscreen.tap(x, y)); }

  /* a finger down at (x, y), moved by (dx, dy) in steps (CSS px), lifted */
  drag(x, y, dx, dy) {
    return this.act(async () => {
      await this.page.touchscreen.touchStart(x, y);
      for (let k = 1; k <= 6; k++) await this.page.touchscreen.touchMove(x + (dx * k) / 6, y + (dy * k) / 6);
      await this.page.touchscreen.touchEnd();
    });
  }

  async boxes(re, pred = () => true) { return (await this.stats()).boxes.filter((b) => re.test(b[0]) && pred(b)); }

  /* the middle of box b in CSS px */
  mid(b) { return [(b[1] + b[3] / 2) / this.dpr, (b[2] + b[4] / 2) / this.dpr]; }

  async tapText(re, pred) {
    const b = (await this.boxes(re, pred)).pop();
    if (!b) return false;
    await this.tap(...this.mid(b));
    return true;
  }

  /* a hash of the canvas's pixels */
  picture() {
    return this.page.evaluate(() => {
      const c = document.getElementById('attnlab'), px = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      let h = 2166136261;
      for (let i = 0; i < px.length; i += 4) h = Math.imul(h ^ ((px[i] << 16) | (px[i + 1] << 8) | px[i + 2]), 16777619);
      return h >>> 0;
    });
  }

  appTitle() { return this.page.evaluate(() => window.attnlabStats.appTitle); }
  picker() { return this.page.evaluate(() => window.attnlabModule._web_picker_open()); }
  text() { return this.stats().then((s) => s.boxes.filter((b) => b[5]).map((b) => b[0]).join(' ')); }
}

async function open(page, url) {
  await page.goto(url, { waitUntil: 'load', timeout: TIMEOUT_MS });
  const end = Date.now() + TIMEOUT_MS;
  while (!(await page.evaluate(() => !!(window.attnlabStats && window.attnlabStats.frames > 0)).catch(() => false))) {
    if (Date.now() > end) throw new Error(url + ': no frame within ' + TIMEOUT_MS + ' ms');
    await sleep(50);
  }
}

/* every shown button of the page's bar inside the viewport */
async function barOnScreen(f, check, s, when) {
  const out = await f.page.evaluate(() => [...document.querySelectorAll('#bar button')].filter((b) => !b.hidden)
    .map((b) => { const r = b.getBoundingClientRect(); return [b.textContent, r.left, r.top, r.right, r.bottom]; }));
  check(out.length >= 3, s.name + ': the bar shows ' + out.length + ' buttons, not 3 (' + when + ')');
  for (const [t, l, tp, r, b] of out)
    check(l >= 0 && tp >= 0 && r <= s.width && b <= s.height, s.name + ': the bar\'s "' + t + '" is off screen at ' +
          [l, tp, r, b].map(Math.round) + ' (' + when + ')');
}

/* a toolbar chip: in the row, else behind "⋯" */
async function tapChip(f, re) {
  if (await f.tapText(re)) return true;
  if (!(await f.tapText(/^⋯$/))) return false;
  return f.tapText(re);
}

/* the list of lessons: whole titles, a drag scrolls it, ✕ and a tap outside close it, a tap opens lesson 4 */
async function picker(f, check, s) {
  check(await tapChip(f, /^l {2}lessons$/) && (await f.picker()), s.name + ': the "l  lessons" chip does not open the list');
  const all = await f.text();
  for (const t of ['The causal mask', 'The padding mask', 'Self-attention'])
    check(all.includes(t), s.name + ': the list does not show the whole title "' + t + '": ' + all.slice(0, 300));
  check(!/The causa…|The paddin…/.test(all), s.name + ': the list cuts titles: ' + all.slice(0, 300));
  const before = all, more = /▼ \d+ more/.test(all); /* a tablet shows every lesson: nothing to scroll */
  await f.drag(s.width / 2, s.height * 0.7, 0, -s.height * 0.4);
  check((await f.picker()) && !/lesson step/.test(await f.appTitle()), s.name + ': a drag on the list closed it or opened a lesson');
  check(!more || (await f.text()) !== before, s.name + ': a drag on the list does not scroll it');
  check(await f.tapText(/^✕$/) && !(await f.picker()), s.name + ': ✕ does not close the list');
  await tapChip(f, /^l {2}lessons$/);
  await f.tap(3, s.height / 2);
  check(!(await f.picker()), s.name + ': a tap outside the list does not close it');
  await tapChip(f, /^l {2}lessons$/);
  for (let i = 0; i < 8 && !(await f.boxes(/^The causal mask$/)).length; i++) await f.drag(s.width / 2, s.height * 0.3, 0, s.height * 0.3);
  check(await f.tapText(/^The causal mask$/), s.name + ': no "The causal mask" to tap in the list');
  await f.page.waitForFunction(() => /lesson step 1\/9$/.test(window.attnlabStats.appTitle), { timeout: 20000 }).catch(() => null);
  return check(/lesson step 1\/9$/.test(await f.appTitle()), s.name + ': lesson 4 did not open: "' + (await f.appTitle()) + '"');
}

/* the panel under the picture: its top, from the "step 1 / 9" line (device px) */
async function panelTop(f) {
  const b = (await f.boxes(/^step \d \/ 9$/))[0];
  return b ? b[2] : null;
}

/* lesson 4 step 1 by touch: drag to the choices and Check, a drag from a choice ticks nothing, taps answer it */
async function step1(f, check, s, shots) {
  const top = await panelTop(f);
  if (!check(top !== null, s.name + ': no "step 1 / 9" in the lesson panel')) return false;
  const canvasH = await f.page.evaluate(() => document.getElementById('attnlab').height);
  check(top > canvasH / 3, s.name + ': the lesson is not under the picture (its top at ' + top + ' of ' + canvasH + ' px)');
  const nav = (await f.boxes(/^(↺ Restore step|↺ Restore|↺)$/))[0];
  if (!check(nav, s.name + ': no ↺ button under the panel')) return false;
  /* in the panel's view: below its header, above its buttons, not clipped away by its scroll (canvas.js's seen) */
  const shown = (re) => f.boxes(re, (b) => b[5] && b[2] > top && b[2] + b[4] <= nav[2]);
  const cue = (await shown(/^▼ more below$/)).pop(), before = await f.text(); /* a tap on it pages down */
  if (cue) await f.tap(...f.mid(cue));
  check(!cue || (await f.text()) !== before, s.name + ': a tap on "▼ more below" does not scroll the lesson');
  const y0 = (top + nav[2]) / 2 / f.dpr;
  for (let i = 0; i < 20 && !(await shown(/^Check$/)).length; i++) await f.drag(s.width / 2, y0 + 40, 0, -80);
  if (!check((await shown(/^Check$/)).length, s.name + ': dragging the lesson never shows Check')) return false;
  const choice = async (c) => {
    const ck = (await shown(/^Check$/)).pop();
    return (await shown(new RegExp('^' + c + '$'))).filter((b) => ck && b[2] < ck[2]).sort((p, q) => p[2] - q[2]).pop();
  };
  const zhi = await choice('只');
  if (!check(zhi, s.name + ': no choice 只 above Check')) return false;
  const [zx, zy] = f.mid(zhi);
  await f.drag(zx, zy, 0, 50); /* ticks nothing: else the taps below would untick it */
  for (let i = 0; i < 10 && !(await shown(/^Check$/)).length; i++) await f.drag(s.width / 2, y0 + 40, 0, -60);
  for (const c of ['只', '猫', '娘']) {
    const b = await choice(c);
    if (check(b, s.name + ': no choice ' + c + ' to tap')) await f.tap(...f.mid(b));
  }
  const ck = (await shown(/^Check$/)).pop();
  if (check(ck, s.name + ': no Check to tap')) await f.tap(...f.mid(ck));
  if (shots) await f.page.screenshot({ path: path.join(shots, 'touch-' + s.name + '-lesson4-step1-checked.png') });
  const said = await f.text();
  check(/Right\./.test(said) && !/Not yet/.test(said), s.name + ': lesson 4 step 1 by touch is not "Right.": ' + said.slice(-300));
  if (shots) await f.page.screenshot({ path: path.join(shots, 'touch-' + s.name + '-lesson4-step1.png') });
  return true;
}

/* step 2: cells of 32 CSS px or more; a tap picks one, its explanation gone when the finger lifts */
async function step2(f, check, s, shots) {
  check(await f.tapText(/^(Next ▶)$/), s.name + ': no "Next ▶" to tap');
  await f.page.waitForFunction(() => /lesson step 2\/9$/.test(window.attnlabStats.appTitle), { timeout: 20000 }).catch(() => null);
  const heat = (await f.stats()).images.find((r) => r[2] > 100 && r[3] > 100);
  if (!check(heat, s.name + ': step 2 shows no heatmap')) return;
  const cell = Math.min(heat[2], heat[3]) / 6 / f.dpr;
  check(cell >= 32, s.name + ': step 2\'s cells are ' + cell.toFixed(1) + ' CSS px (under 32)');
  console.log(s.name + ': lesson 4 step 2\'s cells ' + cell.toFixed(1) + ' CSS px; the lesson from ' +
              ((await panelTop(f)) / f.dpr).toFixed(0) + ' CSS px down');
  const before = await f.picture();
  await f.tap((heat[0] + heat[2] * 5 / 12) / f.dpr, (heat[1] + heat[3] / 12) / f.dpr);
  const after = await f.text();
  check((await f.picture()) !== before, s.name + ': a tap on a cell picks nothing (the frame did not change)');
  check(!/row \d+: .* column \d+: /.test(after), s.name + ': a tapped cell\'s explanation stays after the finger lifted');
  if (shots) await f.page.screenshot({ path: path.join(shots, 'touch-' + s.name + '-lesson4-step2.png') });
}

/* presenter mode from the toolbar: the page's bar hidden; F5 again shows it */
async function presenter(f, check, s) {
  check(await tapChip(f, /^F5 {2}presenter mode$/), s.name + ': no "F5  presenter mode" chip to tap');
  check(await f.page.evaluate(() => document.getElementById('bar').hidden), s.name + ': the page\'s bar stays in presenter mode');
  await f.act(() => f.page.keyboard.press('F5'));
  check(!(await f.page.evaluate(() => document.getElementById('bar').hidden)), s.name + ': the bar does not come back after presenter mode');
}

async function screen(browser, url, s, check, shots) {
  const t0 = Date.now();
  const context = await browser.createBrowserContext(); /* its own storage: no progress from the other screen */
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.setViewport({ width: s.width, height: s.height, deviceScaleFactor: s.deviceScaleFactor, isMobile: true, hasTouch: true });
  await open(page, url + '?lang=en');
  const f = new Finger(page, s.deviceScaleFactor);
  await barOnScreen(f, check, s, 'first frame');
  if (await picker(f, check, s)) {
    await barOnScreen(f, check, s, 'lesson 4 open');
    if (await step1(f, check, s, shots)) await step2(f, check, s, shots);
    await presenter(f, check, s);
  }
  for (const e of errors) check(false, s.name + ': page: ' + e);
  console.log(s.name + ' (' + s.width + '×' + s.height + '): ' + (Date.now() - t0) + ' ms');
  await context.close();
}

async function main() {
  const args = process.argv.slice(2);
  const dir = args.find((a, i) => !a.startsWith('--') && args[i - 1] !== '--shots');
  const shots = args.includes('--shots') ? args[args.indexOf('--shots') + 1] : null;
  if (!dir) die('usage: test_web_touch.js BUILD_WEB [--shots DIR]');
  for (const f of ['index.html', 'canvas.js', 'attnlab-mt.js'])
    if (!fs.existsSync(path.join(dir, f))) die(path.join(dir, f) + ' is missing: run `make web` first');
  if (!fs.existsSync(CHROMIUM)) die(CHROMIUM + ' is missing: apt-get install chromium');
  if (shots) fs.mkdirSync(shots, { recursive: true });
  const failures = [];
  const check = (ok, what) => { if (!ok) failures.push(what); return ok; };
  const t0 = Date.now();
  const { py, url } = await serve(dir);
  const browser = await puppeteer.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu'] });
  try {
    for (const s of SCREENS) await screen(browser, url, s, check, shots);
  } finally {
    await browser.close();
    py.kill();
  }
  for (const f of failures) console.log('FAIL: ' + f);
  console.log((failures.length ? failures.length + ' check(s) failed' : 'web touch: all checks passed') + ' in ' +
              (Date.now() - t0) + ' ms, load average ' + require('os').loadavg()[0].toFixed(2));
  process.exit(failures.length ? 1 : 0);
}

main().catch((e) => die(e.stack || String(e)));
