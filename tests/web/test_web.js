#!/usr/bin/env node
/* test_web.js — the web page (issue 24) in Debian's headless Chromium.
 *
 *   node tests/web/test_web.js BUILD_WEB [--attnlab BUILD/attnlab] [--bench]
 *
 * Serves BUILD_WEB (`make web`'s site) with python3's http.server on
 * 127.0.0.1, opens it with puppeteer-core (package.json pins it; it drives
 * /usr/bin/chromium and downloads no browser), and goes through a student's
 * flows as the Xvfb test does with the window (keys and clicks in, the
 * frame's texts, pictures and title out):
 *   - the first frame shows the built-in example (not blank, "causal on", weights);
 *   - with --attnlab, that frame (and the first in Chinese) against `attnlab render` of the same state and size;
 *   - c toggles the causal mask: the frame changes and says "causal off";
 *   - lesson 4 from the picker: a multiple-choice quiz answered wrong, then
 *     right, and the cell quiz on the mask answered by clicking cells;
 *   - lesson 16: one Enter, and the page downloads brown-induction's training
 *     checkpoints (left out of its data) behind the "opening …" notice; the
 *     lesson opens by itself when they are here, and j steps;
 *   - o opens tang, . changes layer, ] generates a token;
 *   - "Open a model…": too large (the limit said), not a model, then a small one opened;
 *   - after a reload the picker shows lesson 4's progress;
 *   - the language button reloads the page in Chinese, drawn with the page's
 *     own CJK face, the progress still there;
 *   - a link to lesson 7 step 3 in Chinese opens it there; the tab's title and
 *     the address follow Space, Back and a reload; "Copy link"; a link past
 *     the lesson's end says so.
 * These run on the threaded build (attnlab-mt.js): the page, isolated by its
 * own service worker (sw.js) after one reload, must say it runs it, and run
 * its requests on Web Workers (web_worker_jobs > 0 after a toggle). A shorter
 * run (the first frame, the toggle, lesson 16, tang) follows on the
 * single-threaded build, in a page whose service worker is blocked (so not
 * isolated); ?threads=0 asks for that build on an isolated page too.
 * Prints, for each build, the first-frame time and, for every action, how long the page was
 * busy in one go (frozen), how long from the input to its frame and to its work done (those
 * over the 100 ms budget always, all with ATTNLAB_WEB_VERBOSE=1); fails when
 * one froze the page for over a second (ATTNLAB_WEB_FREEZE_MS). With --bench also the
 * engine's forward in wasm (web_bench) at the attention shape of WEB.md.
 * Exit 0 when every check passes, 1 with one line per failure, 2 when it
 * cannot run. */
'use strict';

const { spawn } = require('child_process');
const fs = require('fs');
const path = require('path');
const zlib = require('zlib');
const puppeteer = require('puppeteer-core');

const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const TIMEOUT_MS = 60000;
/* The issue's budget is that no frame waits more than 100 ms at the shipped
 * models' sizes: every action's figure is printed against it. The check is a
 * freeze, ten times that, so that a loaded machine does not fail it. */
const BUSY_BUDGET_MS = 100;
const FREEZE_MS = Number(process.env.ATTNLAB_WEB_FREEZE_MS || 1000);

function die(msg) {
  console.error('test_web: ' + msg);
  process.exit(2);
}

/* python3 -m http.server on a free port: the port from its first line */
function serve(dir) {
  return new Promise((resolve, reject) => {
    const py = spawn('python3', ['-u', '-m', 'http.server', '-b', '127.0.0.1', '-d', dir, '0'],
                     { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    const onData = (d) => {
      out += d;
      const m = out.match(/port (\d+)/);
      if (m) resolve({ py, url: 'http://127.0.0.1:' + m[1] + '/' });
    };
    py.stdout.on('data', onData);
    py.on('exit', (code) => reject(new Error('http.server ended (' + code + '): ' + out)));
  });
}

/* The page's weight: what it loads before its first frame, each file compressed with gzip -9
 * (as a static host serves it): [total bytes, [file, bytes]...]. Models, fetched when opened, are not in it.
 * module: the build's files (MODULES), of which a visit fetches one. */
const MODULES = { single: ['attnlab.js', 'attnlab.wasm', 'attnlab.data'],
                  threads: ['attnlab-mt.js', 'attnlab-mt.wasm', 'attnlab-mt.worker.js', 'attnlab.data'] };
function weight(dir, module) {
  const files = ['index.html', 'canvas.js', 'sw.js', ...module, 'manifest.webmanifest'];
  for (const f of fs.readdirSync(path.join(dir, 'fonts'))) if (/\.ttf$/.test(f)) files.push('fonts/' + f);
  const sizes = files.map((f) => [f, zlib.gzipSync(fs.readFileSync(path.join(dir, f)), { level: 9 }).length]);
  return [sizes.reduce((n, x) => n + x[1], 0), sizes];
}

/* What the page's canvas shows: a hash of its pixels, and how many colours it has. */
function picture(page) {
  return page.evaluate(() => {
    const c = document.getElementById('attnlab');
    const px = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    const colours = new Set();
    let h = 2166136261;
    for (let i = 0; i < px.length; i += 4) {
      const v = (px[i] << 16) | (px[i + 1] << 8) | px[i + 2];
      if (colours.size < 1000) colours.add(v);
      h = Math.imul(h ^ v, 16777619);
    }
    return { hash: h >>> 0, colours: colours.size };
  });
}

/* The page as a student drives it: keys and clicks in, a frame out. */
class Driver {
  constructor(page) {
    this.page = page;
    this.timings = []; /* [what, busy ms, input-to-frame ms, input-to-idle ms: its work done and taken in] */
  }

  stats() { return this.page.evaluate(() => window.attnlabStats); }

  /* waits until a frame newer than n is drawn; false after timeout ms */
  drawnAfter(n, timeout = 10000) {
    return this.page.waitForFunction((m) => window.attnlabStats.frames > m, { timeout }, n).then(() => true, () => false);
  }

  /* does fn (an input), waits for its frame, and keeps how long the page was busy; false: no frame */
  async act(what, fn) {
    const n = await this.page.evaluate(() => {
      window.attnlabStats.longestBusyMs = 0;
      window.attnlabStats.inputToIdleMs = null;
      return window.attnlabStats.frames;
    });
    await fn();
    const ok = await this.drawnAfter(n);
    /* the work the frame announced (a model read, a recomputation) runs after it: it counts too */
    await this.page.waitForFunction(() => !window.attnlabStats.pending, { timeout: 30000 }).catch(() => null);
    await this.page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    const s = await this.stats();
    this.timings.push([what, s.longestBusyMs, ok ? s.inputToFrameMs : null, s.inputToIdleMs]);
    return ok;
  }

  key(k, what) { return this.act(what || k, () => this.page.keyboard.press(k)); }

  click(x, y, what) { return this.act(what, () => this.page.mouse.click(x, y)); }

  /* the last frame's text boxes [s, x, y, w, h] that match re (and pred) */
  async boxes(re, pred = () => true) {
    return (await this.stats()).boxes.filter((b) => re.test(b[0]) && pred(b));
  }

  /* clicks the middle of the last text matching re (and pred); false when there is none or no frame followed */
  async clickText(re, pred, what) {
    const b = (await this.boxes(re, pred)).pop();
    if (!b) return false;
    return this.click(b[1] + b[3] / 2, b[2] + b[4] / 2, what || 'click ' + b[0]);
  }

  /* the same for the lowest such text: a quiz's choice, below the step's
   * text that may name the same token (the docked quiz is drawn before it) */
  async clickLowest(re, pred, what) {
    const b = (await this.boxes(re, pred)).sort((p, q) => p[2] - q[2]).pop();
    if (!b) return false;
    return this.click(b[1] + b[3] / 2, b[2] + b[4] / 2, what || 'click ' + b[0]);
  }

  /* the words drawn right of x, in reading order, joined by spaces (the lesson panel flows its text word by word) */
  async textRightOf(x) {
    const b = (await this.stats()).boxes.filter((t) => t[1] >= x);
    b.sort((p, q) => p[2] - q[2] || p[1] - q[1]);
    return b.map((t) => t[0]).join(' ');
  }

  /* turns the wheel over (x, y) until a text matching re (and pred) shows; false if it never does */
  async scrollTo(x, y, re, pred) {
    for (let i = 0; i < 20; i++) {
      if ((await this.boxes(re, pred)).length) return true;
      await this.page.mouse.move(x, y);
      await this.act('wheel', () => this.page.mouse.wheel({ deltaY: 100 }));
    }
    return (await this.boxes(re, pred)).length > 0;
  }

  /* the app's own title (the desktop window's: model, stage, "lesson step 2/9"), which the tab shows outside a lesson */
  title(re, timeout = 20000) {
    return this.page.waitForFunction((src) => new RegExp(src).test(window.attnlabStats.appTitle), { timeout }, re.source)
      .then(() => true, () => false);
  }

  /* the tab's title (in a lesson: "07 Title · step 3/9 — attnlab") */
  tab(re, timeout = 20000) {
    return this.page.waitForFunction((src) => new RegExp(src).test(document.title), { timeout }, re.source)
      .then(() => true, () => false);
  }
}

/* Opens url and waits for the page's first frame: the page may reload itself once on the way
 * (its service worker taking over, to be cross-origin isolated). */
async function open(page, url) {
  const t0 = Date.now();
  await page.goto(url, { waitUntil: 'load', timeout: TIMEOUT_MS });
  const end = t0 + TIMEOUT_MS;
  for (;;) {
    const ok = await page.evaluate(() => !!(window.attnlabStats && window.attnlabStats.frames > 0)).catch(() => false);
    if (ok) return Date.now() - t0;
    if (Date.now() > end) throw new Error(url + ': no frame within ' + TIMEOUT_MS + ' ms');
    await new Promise((r) => setTimeout(r, 50));
  }
}

/* which build the page runs, as it says (its bar's tooltip), and whether its requests ran on workers */
async function build(d, check, want) {
  const [isolated, which, tip, workers] = await d.page.evaluate(() => [window.crossOriginIsolated, window.attnlabStats.build,
    document.getElementById('bar').title, window.attnlabModule._web_worker_jobs(0)]);
  check(which === want, 'the page runs the ' + which + ' build, not the ' + want + ' one (cross-origin isolated: ' + isolated + ')');
  check(want === 'single' || isolated, 'the threaded page is not cross-origin isolated');
  check(want === 'threads' ? /Web Workers/.test(tip) : /own thread/.test(tip), 'the bar does not say which build runs: "' + tip + '"');
  console.log(want + ': cross-origin isolated ' + isolated + ', "' + tip + '"');
  return workers;
}

async function firstFrame(d, check) {
  const page = d.page;
  const s = await d.stats();
  const first = await picture(page);
  check(first.colours >= 20, 'first frame: only ' + first.colours + ' colours: the canvas looks blank');
  check(s.texts.includes('attnlab'), 'first frame: no "attnlab" in the toolbar');
  check(s.texts.some((t) => /causal on/.test(t)), 'first frame: the built-in example is not causal ("causal on" missing)');
  check(s.texts.some((t) => /^weights\b/.test(t)), 'first frame: not on the weights stage');
  check((await page.title()).startsWith('attnlab'), 'the page title is "' + (await page.title()) + '"');
  if (process.env.ATTNLAB_WEB_SHOT) await page.screenshot({ path: process.env.ATTNLAB_WEB_SHOT });
  console.log('first frame: ' + s.firstFrameMs.toFixed(0) + ' ms after the page began');
  return first;
}

/* The first frame against the desktop's `attnlab render` of the same state at the same size (the
 * same command list, drawn by SDL_ttf and SDL's renderer there, by the canvas here). Pixels that
 * differ by more than DIFF_LEVELS in a channel are counted inside the frame's text boxes (glyphs
 * rasterised by two font engines) and outside them (everything else: rectangles, heatmaps,
 * hatches, lines), which must agree but for OUTSIDE_BUDGET of the pixels (a long line drawn with
 * fractional advances may end a pixel or two off its measured box). */
const DIFF_LEVELS = 48;
const OUTSIDE_BUDGET = 0.001;
async function compareRender(d, check, attnlab, lang) {
  const size = await d.page.evaluate(() => [document.getElementById('attnlab').width, document.getElementById('attnlab').height]);
  const tmp = fs.mkdtempSync(path.join(require('os').tmpdir(), 'attnlab-web-'));
  try {
    const png = path.join(tmp, 'render.png');
    const r = require('child_process').spawnSync(attnlab, ['render', '--lang', lang, '--size', size.join('x'), '-o', png],
                                                 { encoding: 'utf8', timeout: 60000 });
    if (!check(r.status === 0, 'attnlab render failed (' + r.status + '): ' + (r.stderr || '').trim())) return;
    const src = 'data:image/png;base64,' + fs.readFileSync(png).toString('base64');
    const m = await d.page.evaluate(async (src, levels) => {
      const img = new Image();
      img.src = src;
      await img.decode();
      const c = document.getElementById('attnlab');
      if (img.width !== c.width || img.height !== c.height) return { size: [img.width, img.height] };
      const a = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      const o = document.createElement('canvas');
      o.width = img.width, o.height = img.height;
      o.getContext('2d').drawImage(img, 0, 0);
      const n = o.getContext('2d').getImageData(0, 0, o.width, o.height).data;
      const text = new Uint8Array(c.width * c.height); /* 1: in a text box, grown by 2 px */
      for (const [, x, y, w, h] of window.attnlabStats.boxes)
        for (let j = Math.max(0, y - 2); j < Math.min(c.height, y + h + 2); j++)
          text.fill(1, j * c.width + Math.max(0, x - 2), j * c.width + Math.min(c.width, x + w + 2));
      let inside = 0, outside = 0, nText = 0;
      for (let p = 0; p < text.length; p++) {
        const i = 4 * p;
        const diff = Math.max(Math.abs(a[i] - n[i]), Math.abs(a[i + 1] - n[i + 1]), Math.abs(a[i + 2] - n[i + 2]));
        nText += text[p];
        if (diff > levels) text[p] ? inside++ : outside++;
      }
      return { pixels: text.length, nText, inside, outside };
    }, src, DIFF_LEVELS);
    if (!check(!m.size, 'attnlab render wrote ' + (m.size || []).join('x') + ', not ' + size.join('x'))) return;
    const outside = m.outside / (m.pixels - m.nText), inside = m.inside / m.nText;
    console.log('the page against attnlab render (' + lang + ', ' + size.join('x') + '): pixels differing by more than ' + DIFF_LEVELS +
                ' levels: ' + (100 * inside).toFixed(2) + '% of the text boxes\' (glyph rasterisation), ' + (100 * outside).toFixed(3) +
                '% of the rest (budget ' + (100 * OUTSIDE_BUDGET).toFixed(1) + '%)');
    check(outside <= OUTSIDE_BUDGET, 'the page\'s first frame (' + lang + ') differs from attnlab render outside text in ' + m.outside + ' pixels (' +
          (100 * outside).toFixed(3) + '%, budget ' + (100 * OUTSIDE_BUDGET).toFixed(1) + '%)');
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

async function toggle(d, check, first) {
  check(await d.key('c', 'c (causal mask off)'), 'c: no frame followed the key within 10 s');
  const s = await d.stats();
  check((await picture(d.page)).hash !== first.hash, 'c: the frame did not change');
  check(s.texts.some((t) => /causal off/.test(t)), 'c: the toolbar does not say "causal off"');
  check(await d.key('c', 'c (causal mask on)'), 'c again: no frame followed the key');
  check((await d.stats()).texts.some((t) => /causal on/.test(t)), 'c again: the toolbar does not say "causal on"');
}

/* what a key asks of the page itself: s downloads the frame as a PNG, f goes fullscreen and back,
 * q says the tab is the reader's to close (gone with the next key) */
async function pageRequests(d, check) {
  const dir = fs.mkdtempSync(path.join(require('os').tmpdir(), 'attnlab-web-'));
  try {
    const cdp = await d.page.target().createCDPSession();
    await cdp.send('Page.setDownloadBehavior', { behavior: 'allow', downloadPath: dir });
    check(await d.key('s', 's (save the frame)'), 's: no frame followed');
    let png = null;
    for (let i = 0; i < 50 && !png; i++) {
      png = fs.readdirSync(dir).find((f) => /^attnlab-.*\.png$/.test(f));
      if (!png) await new Promise((r) => setTimeout(r, 100));
    }
    if (check(png, 's: nothing was downloaded')) {
      const bytes = fs.readFileSync(path.join(dir, png));
      check(bytes.slice(1, 4).toString() === 'PNG' && bytes.readUInt32BE(16) === 1280, 's: ' + png + ' is not a 1280-pixel-wide PNG');
      await d.drawnAfter((await d.stats()).frames);
      check((await d.boxes(new RegExp('saved ' + png.replace(/[.]/g, '[.]')))).length === 1, 's: the status line does not say "saved ' + png + '"');
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  check(await d.key('f', 'f (fullscreen)'), 'f: no frame followed');
  check(await d.page.evaluate(() => document.fullscreenElement !== null), 'f: the page did not go fullscreen');
  check(await d.key('f', 'f (fullscreen off)'), 'f again: no frame followed');
  check(await d.page.evaluate(() => document.fullscreenElement === null), 'f again: the page stayed fullscreen');
  await d.page.setViewport({ width: 1280, height: 800, deviceScaleFactor: 1 }); /* headless leaves fullscreen at its own size */
  const note = () => d.page.$eval('#note', (e) => (e.hidden ? '' : e.textContent));
  await d.key('q', 'q (quit)');
  check(/close this tab/.test(await note()), 'q: the page does not say it cannot close itself: "' + (await note()) + '"');
  await d.key('Escape', 'Esc (after q)');
  check((await note()) === '', 'q\'s note stays after the next key: "' + (await note()) + '"');
}

/* o passing brown-induction does not fetch its 29 MB of checkpoints (lesson 16 or j does); o goes
 * on round to the built-in example */
async function passingBy(d, check, requested) {
  let passed = false;
  for (let i = 0; i < 6 && !passed; i++) {
    await d.key('o', 'o (passing by brown-induction)');
    passed = /brown-induction/.test(await d.page.title());
  }
  await new Promise((r) => setTimeout(r, 500));
  for (let i = 0; i < 8 && !/^attnlab - weights/.test(await d.page.title()); i++) await d.key('o', 'o (round to the example)');
  check(passed, 'o never reached brown-induction: "' + (await d.page.title()) + '"');
  check(!requested.some((u) => /checkpoints\//.test(u)), 'o passing brown-induction fetched its checkpoints');
}

/* lesson 4: the picker, a choice quiz wrong then right, the cell quiz on the mask */
async function lesson4(d, check) {
  check(await d.key('l', 'l (the lesson picker)'), 'l: no frame followed the key');
  check(await d.clickText(/^The causal mask$/, () => true, 'open lesson 4 (click in the picker)'),
        'the picker shows no "The causal mask" to click');
  if (!check(await d.title(/lesson step 1\/9$/), 'lesson 4 did not open at step 1 of 9: title "' + (await d.page.title()) + '"'))
    return;
  const panel = (await d.boxes(/^step 1 \/ 9$/))[0];
  if (!check(panel, 'lesson 4: no "step 1 / 9" in the lesson panel')) return;
  const px = panel[1];
  const nav = (await d.boxes(/^↺ Restore step$/))[0];
  if (!check(nav, 'lesson 4: no "↺ Restore step" button under the panel')) return;
  /* in the panel and above its buttons (the panel scrolls: a text below them is clipped away) */
  const inPanel = (b) => b[1] >= px && b[2] + b[4] <= nav[2];
  check(/Choose all that apply\./.test(await d.textRightOf(px)), 'lesson 4 step 1: no multiple-choice quiz in the panel');
  check(await d.scrollTo(px + 100, 400, /^Check$/, inPanel), 'lesson 4 step 1: the wheel never shows a Check button');
  /* a choice: the lowest such text above Check (the step's text may name the
   * token above, the explanations after Check below) */
  const pick = async (c, what) => {
    const ck = (await d.boxes(/^Check$/, inPanel)).pop();
    return !!ck && d.clickLowest(new RegExp('^' + c + '$'), (b) => inPanel(b) && b[2] < ck[2], what);
  };
  /* wrong: 你 alone (the right answer is 只 猫 娘) */
  check(await pick('你', 'pick choice 你'), 'lesson 4: no choice 你 to click in the panel');
  check(await d.clickText(/^Check$/, inPanel, 'Check (wrong)'), 'lesson 4: no Check button');
  const wrong = await d.textRightOf(px);
  check(/Not yet: 0 right, 1 wrong, 3 missing\./.test(wrong),
        'lesson 4, a wrong answer: the panel does not say "Not yet: 0 right, 1 wrong, 3 missing.": ' + wrong.slice(-300));
  check(await pick('你', 'unpick 你'), 'lesson 4: 你 could not be clicked again');
  for (const c of ['只', '猫', '娘'])
    check(await pick(c, 'pick choice ' + c), 'lesson 4: no choice ' + c + ' to click');
  check(await d.clickText(/^Check$/, inPanel, 'Check (right)'), 'lesson 4: no Check button the second time');
  const right = await d.textRightOf(px);
  check(/Right\./.test(right) && !/Not yet/.test(right), 'lesson 4, the right answer: the panel does not say "Right.": ' + right.slice(-300));

  /* step 2: click every cell the causal mask removes (the 15 above the diagonal) */
  check(await d.key(' ', 'Space (next step)'), 'Space: no frame followed');
  check(await d.title(/scores - .*lesson step 2\/9$/), 'Space: not on step 2 (the mask matrix, on the scores): "' + (await d.page.title()) + '"');
  const heat = (await d.stats()).images.find((r) => r[2] > 100 && r[3] > 100);
  if (!check(heat, 'lesson 4 step 2: no heatmap drawn')) return;
  const [hx, hy, hw, hh] = heat;
  const cell = (i, j) => [hx + (j + 0.5) * hw / 6, hy + (i + 0.5) * hh / 6];
  const before = await picture(d.page);
  check(await d.click(...cell(0, 0), 'click cell (0, 0)'), 'a click on the heatmap drew no frame');
  check((await picture(d.page)).hash !== before.hash, 'a clicked cell does not show as picked');
  check(await d.clickText(/^Check$/, inPanel, 'Check cells (wrong)'), 'lesson 4 step 2: no Check button');
  check(/Not yet: 0 right, 1 wrong \(red\), 15 missing\./.test(await d.textRightOf(px)),
        'lesson 4 step 2, the diagonal cell: the panel does not say "Not yet: 0 right, 1 wrong (red), 15 missing."');
  await d.click(...cell(0, 0), 'unpick cell (0, 0)');
  for (let i = 0; i < 6; i++)
    for (let j = i + 1; j < 6; j++) await d.click(...cell(i, j), 'click cell (' + i + ', ' + j + ')');
  check(await d.clickText(/^Check$/, inPanel, 'Check cells (right)'), 'lesson 4 step 2: no Check button the second time');
  check(/Right: all 15\./.test(await d.textRightOf(px)), 'lesson 4 step 2, the 15 masked cells: the panel does not say "Right: all 15."');
  const kept = await d.page.waitForFunction(() => /04-causal-mask/.test(localStorage.getItem('attnlab.progress') || ''),
                                            { timeout: 10000 }).then(() => true, () => false);
  check(kept, 'lesson 4: its progress is not in localStorage');
  check(await d.key('Escape', 'Esc (leave the lesson)'), 'Esc: no frame followed');
}

/* lesson 16 needs brown-induction's training checkpoints, which the page leaves out of its data:
 * one Enter downloads them behind the "opening …" notice, and the lesson opens by itself when they
 * are here (issue 35: it took a second Enter before); then j steps */
async function lesson16(d, check) {
  check(await d.key('l', 'l (the picker)'), 'l: no frame followed');
  for (const k of ['Home', ...Array(16).fill('ArrowDown')]) await d.key(k); /* 00 … 16, whatever follows it */
  const t0 = Date.now();
  check(await d.key('Enter', 'Enter (lesson 16, no checkpoints yet)'), 'Enter on lesson 16: no frame followed');
  const opened = await d.page.waitForFunction(() => /brown-induction .*lesson step 1\/\d+$/.test(window.attnlabStats.appTitle),
                                              { timeout: TIMEOUT_MS }).then(() => true, () => false);
  console.log('lesson 16 opened, its checkpoints downloaded, in ' + (Date.now() - t0) + ' ms');
  check(opened, 'lesson 16 did not open by itself once its checkpoints were fetched: "' + (await d.page.title()) + '"');
  check((await d.boxes(/^training step 0 of 3000/)).length === 1, 'lesson 16 step 1: not at training step 0');
  check(await d.key('j', 'j (the next checkpoint)'), 'j: no frame followed');
  check((await d.boxes(/^training step 25 of 3000/)).length === 1, 'j: not at training step 25');
  check(await d.key('Escape', 'Esc (leave lesson 16)'), 'Esc: no frame followed');
}

/* o until tang, . to layer 1, ] writes a token */
async function tang(d, check) {
  let opened = false;
  for (let i = 0; i < 8 && !opened; i++) {
    await d.key('o', 'o (the next model)');
    opened = await d.title(/^attnlab - tang - layers\.0\.weights/, 3000);
    const t = await d.page.title();
    d.timings[d.timings.length - 1][0] = 'o: ' + t.replace(/^attnlab - /, '').replace(/ - .*/, '');
  }
  if (!check(opened, 'o: tang never opened on layer 0\'s weights: "' + (await d.page.title()) + '"')) return;
  const shown = await picture(d.page);
  check(shown.colours >= 16, 'tang: the picture looks blank');
  check(await d.key('.', '. (layer 1 of tang)'), '.: no frame followed');
  check(await d.title(/^attnlab - tang - layers\.1\.weights/), '. did not move to layer 1: "' + (await d.page.title()) + '"');
  const layer1 = await picture(d.page);
  check(layer1.hash !== shown.hash, '.: the picture did not change');
  check(await d.key(']', '] (tang writes a token)'), ']: no frame followed');
  check(await d.title(/decoding$/), '] at the end of the text: not decoding: "' + (await d.page.title()) + '"');
  check((await picture(d.page)).hash !== layer1.hash, ']: the picture did not change');
}

/* the page's "Open a model…": a folder too large is refused with the limit; one without a
 * config.json is named so; a small one (tang-mqa's files) opens */
async function ownModel(d, check, models) {
  const input = await d.page.$('#model-file');
  const note = () => d.page.$eval('#bar-note', (e) => e.textContent);
  const noted = (re) => d.page.waitForFunction((src) => new RegExp(src).test(document.getElementById('bar-note').textContent),
                                               { timeout: 20000 }, re.source).then(() => true, () => false);
  if (!check(input && await d.page.$eval('#open', (b) => !b.hidden), 'no "Open a model…" button in the page\'s bar')) return;
  const tmp = fs.mkdtempSync(path.join(require('os').tmpdir(), 'attnlab-web-'));
  try {
    const big = path.join(tmp, 'model.safetensors');
    fs.closeSync(fs.openSync(big, 'w'));
    fs.truncateSync(big, 300e6); /* sparse: nothing is written, nothing read */
    const own = ['config.json', 'tokenizer.json'].map((f) => path.join(models, 'tang-mqa', f));
    await input.uploadFile(big, ...own);
    check(await noted(/That model is 30\d\.\d MB: the page opens models up to 256 MB/),
          'a 300 MB model: the bar does not give the 256 MB limit: "' + (await note()) + '"');
    await input.uploadFile(path.join(models, 'tang-mqa', 'tokenizer.json'));
    check(await noted(/Not a model folder: config\.json is missing/), 'a folder without config.json: "' + (await note()) + '"');
    const files = ['config.json', 'model.safetensors', 'tokenizer.json', 'tokenizer_config.json'].map((f) => path.join(models, 'tang-mqa', f));
    await d.act('open a model of your own (tang-mqa\'s files)', () => input.uploadFile(...files));
    check(await d.title(/^attnlab - yours-\d+ - layers\.0\.weights/), 'your own model did not open: "' + (await d.page.title()) + '"');
    check(await noted(/your model yours-\d+ is open/), 'your own model: the bar does not say it is open: "' + (await note()) + '"');
    check((await picture(d.page)).colours >= 16, 'your own model: the picture looks blank');
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

/* after a reload the picker shows lesson 4 begun, with its two quizzes right */
async function reload(d, check) {
  await d.page.reload({ waitUntil: 'load', timeout: TIMEOUT_MS });
  await d.page.waitForFunction(() => window.attnlabStats && window.attnlabStats.frames > 0, { timeout: TIMEOUT_MS });
  check(await d.key('l', 'l (the picker, after a reload)'), 'l after a reload: no frame followed');
  const row = await d.boxes(/^step 2 \/ 9 · quizzes 2\/\d+$/);
  check(row.length === 1, 'after a reload the picker does not show lesson 4 at "step 2 / 9 · quizzes 2/N"');
  await d.key('Escape', 'Esc (close the picker)');
}

/* the language button: the page again in Chinese, drawn with its own CJK face, the progress kept */
async function chinese(d, check, attnlab) {
  const nav = d.page.waitForNavigation({ waitUntil: 'load', timeout: TIMEOUT_MS });
  await d.page.click('#lang');
  await nav;
  await d.page.waitForFunction(() => window.attnlabStats && window.attnlabStats.frames > 0, { timeout: TIMEOUT_MS });
  const s = await d.stats();
  check(s.texts.some((t) => /因果掩码/.test(t)), 'Chinese: the toolbar does not say 因果掩码 (causal mask)');
  if (attnlab) await compareRender(d, check, attnlab, 'zh');
  const bar = await d.page.$eval('#bar', (e) => e.textContent);
  check(/课程进度保存在本浏览器中/.test(bar) && /打开模型/.test(bar), 'Chinese: the page\'s bar is not in Chinese: "' + bar + '"');
  const face = await d.page.evaluate(() => [...document.fonts].filter((f) => /WenQuanYi/.test(f.family)).map((f) => f.status));
  /* the page's own face (fonts/), not a system one: its @font-face loaded */
  check(face.length === 1 && face[0] === 'loaded', 'Chinese: the page\'s WenQuanYi Micro Hei is not loaded (' + face + ')');
  check(await d.key('l', 'l (the picker in Chinese)'), 'l in Chinese: no frame followed');
  check((await d.boxes(/^课程（中文）$/)).length === 1, 'Chinese: the picker is not headed 课程（中文）');
  check((await d.boxes(/^第 2 \/ 9 步 · 测验 2\/\d+$/)).length === 1,
        'Chinese: the picker does not show lesson 4\'s progress (第 2 / 9 步 · 测验 2/N)');
  if (process.env.ATTNLAB_WEB_SHOT_ZH) await d.page.screenshot({ path: process.env.ATTNLAB_WEB_SHOT_ZH });
  await d.key('Escape', 'Esc (the picker closed)');
  /* the page's own notes speak the language too (they are shown outside the app core) */
  await d.key('q', 'q (quit, in Chinese)');
  const said = await d.page.$eval('#note', (e) => (e.hidden ? '' : e.textContent));
  check(/关闭这个标签页/.test(said), 'Chinese: q\'s note is not in Chinese: "' + said + '"');
  await d.key('Escape', 'Esc (after q, in Chinese)');
}

/* links to a step: a fresh page at ?lesson=07&step=3&lang=zh shows lesson 7 at step 3 in Chinese (the tab and
 * the panel); Space moves the address to step=4, Back returns to step 3, a reload keeps it; "Copy link" gives
 * the address; a link past the lesson's end opens the page as usual and says so */
async function links(d, check, url) {
  const page = d.page, t0 = Date.now();
  const tab = (step) => new RegExp('^07 RoPE：旋转位置编码 · 第 ' + step + '/9 步 — attnlab$');
  const at = (step) => page.waitForFunction((s) => new URLSearchParams(location.search).get('step') === s, { timeout: 10000 }, String(step))
    .then(() => true, () => false);
  const panel3 = () => page.waitForFunction(() => window.attnlabStats.texts.includes('第 3 / 9 步'), { timeout: 10000 })
    .then(() => true, () => false);
  await open(page, url + '?lesson=07&step=3&lang=zh');
  if (!check(await d.tab(tab(3)), 'the link to lesson 7 step 3: the tab is "' + (await page.title()) + '"')) return;
  check(await panel3(), 'the link to lesson 7 step 3: the panel does not say 第 3 / 9 步');
  check(/[?]lesson=07&step=3&lang=zh$/.test(page.url()), 'the link to lesson 7 step 3: the address is ' + page.url());
  await page.$eval('#copy', (b) => b.click());
  const copied = await page.waitForFunction(() => /lesson=07&step=3&lang=zh/.test(document.getElementById('bar-note').textContent),
                                            { timeout: 5000 }).then(() => true, () => false);
  check(copied, 'Copy link: the bar does not give the step\'s address: "' + (await page.$eval('#bar-note', (e) => e.textContent)) + '"');
  check(await d.key(' ', 'Space (lesson 7 step 4)'), 'Space in lesson 7: no frame followed');
  check(await d.tab(tab(4)) && await at(4), 'Space in lesson 7: the tab or the address did not follow to step 4: "' +
        (await page.title()) + '", ' + page.url());
  await page.goBack();
  check(await d.tab(tab(3)) && await at(3), 'Back: not on lesson 7 step 3 again: "' + (await page.title()) + '", ' + page.url());
  check(await panel3(), 'Back: the panel does not say 第 3 / 9 步');
  await page.reload({ waitUntil: 'load', timeout: TIMEOUT_MS });
  check(await d.tab(tab(3)), 'a reload on lesson 7 step 3: the tab is "' + (await page.title()) + '"');
  await open(page, url + '?lesson=07&step=42&lang=en');
  const said = await page.waitForFunction(() => window.attnlabStats.texts.some((t) => /this link asks for step 42/.test(t)),
                                          { timeout: 10000 }).then(() => true, () => false);
  check(said, 'a link to step 42 of lesson 7: the status line does not say the lesson has no such step');
  check(/^attnlab - weights/.test(await page.title()), 'a link to step 42 of lesson 7: the page is not as usual: "' +
        (await page.title()) + '"');
  console.log('links: ' + (Date.now() - t0) + ' ms (three loads and a reload)');
}

/* Every lesson opened by a link on a freshly loaded page, as a student's first click would (not
 * after lesson 4: lesson 5 once opened only after another lesson, its measure NaN on a fresh page,
 * issue 35): its first step, named in the tab. Half the lessons (parity: 0 the even ones, 1 the odd
 * ones and the glossary) in each call, so that each lesson is opened once and each language and build
 * opens some (CI's 15 minutes). Lesson 16 needs its model's checkpoints fetched first (issue 35,
 * finding 2): left out. extra: more of the query (&threads=0). */
async function everyLesson(d, check, url, lang, extra, parity) {
  const page = d.page, t0 = Date.now();
  const names = fs.readdirSync(path.join(__dirname, '..', '..', 'lessons', lang)).filter((f) => /^\d\d-.*\.md$/.test(f)).sort()
    .filter((f) => Number(f.slice(0, 2)) % 2 === parity && f.slice(0, 2) !== '16');
  let opened = 0;
  for (const f of names) {
    const nn = f.slice(0, 2);
    await open(page, url + '?lesson=' + nn + '&lang=' + lang + extra);
    const re = new RegExp('^' + nn + ' .* · ' + (lang === 'zh' ? '第 1/\\d+ 步' : 'step 1/\\d+') + ' — attnlab$');
    if (check(await d.tab(re, 30000), lang + extra + ': lesson ' + nn + ' on a fresh page did not open at step 1: the tab says "' +
              (await page.title()) + '"'))
      opened++;
  }
  console.log(lang + extra + ': ' + opened + ' of ' + names.length + (parity ? ' odd' : ' even') +
              ' lessons opened on a fresh page (16 needs its checkpoints), ' + (Date.now() - t0) + ' ms');
}

/* Prints the actions over the budget (all with ATTNLAB_WEB_VERBOSE) and the longest the page's thread was
 * busy in one go, with the load average; fails a freeze */
function busiest(d, check, label) {
  let worst = ['', 0];
  const ms = (x) => (x === null || x === undefined ? '-' : x.toFixed(1));
  for (const [what, busy, toFrame, toIdle] of d.timings) {
    if (process.env.ATTNLAB_WEB_VERBOSE || busy > BUSY_BUDGET_MS)
      console.log('  ' + label + ': ' + what + ': busy ' + busy.toFixed(1) + ' ms, input to frame ' + ms(toFrame) + ' ms, to its work done ' +
                  ms(toIdle) + ' ms');
    if (busy > worst[1]) worst = [what, busy];
    check(busy <= FREEZE_MS, label + ': ' + what + ': the page froze for ' + busy.toFixed(0) + ' ms (more than ' + FREEZE_MS + ' ms)');
  }
  const over = d.timings.filter((t) => t[1] > BUSY_BUDGET_MS).length;
  console.log(label + ': ' + d.timings.length + ' actions, ' + over + ' over the ' + BUSY_BUDGET_MS + ' ms budget; the longest the page was busy in one go: ' +
              worst[1].toFixed(1) + ' ms (' + worst[0] + '), load average ' + require('os').loadavg()[0].toFixed(2));
}

async function main() {
  const args = process.argv.slice(2);
  const dir = args.find((a, i) => !a.startsWith('--') && args[i - 1] !== '--attnlab');
  if (!dir) die('usage: test_web.js BUILD_WEB [--attnlab BUILD/attnlab] [--bench]');
  if (args.includes('--attnlab') && !fs.existsSync(args[args.indexOf('--attnlab') + 1] || ''))
    die('--attnlab ' + args[args.indexOf('--attnlab') + 1] + ': no such program (make builds build/attnlab)');
  for (const f of ['index.html', 'canvas.js', 'sw.js', ...MODULES.single, ...MODULES.threads])
    if (!fs.existsSync(path.join(dir, f))) die(path.join(dir, f) + ' is missing: run `make web` first');
  if (!fs.existsSync(CHROMIUM)) die(CHROMIUM + ' is missing: apt-get install chromium');

  const failures = [];
  const check = (ok, what) => { if (!ok) failures.push(what); return ok; };
  const mb = (n) => (n / 1e6).toFixed(2) + ' MB'; /* 10^6 bytes */
  for (const [which, module] of Object.entries(MODULES)) {
    const [bytes, sizes] = weight(dir, module);
    console.log(which + ': page weight, gzip -9: ' + mb(bytes) + ' (' + sizes.map(([f, n]) => f + ' ' + mb(n)).join(', ') + ')');
    check(bytes < 17e6, which + ': the page weighs ' + mb(bytes) + ' compressed: over the 17 MB budget');
  }
  const { py, url } = await serve(dir);
  const browser = await puppeteer.launch({ executablePath: CHROMIUM, headless: true,
                                           args: ['--no-sandbox', '--disable-gpu'] });
  try {
    const page = await browser.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    const requested = [];
    page.on('request', (r) => requested.push(r.url()));
    page.on('console', (m) => { if (m.type() === 'error' && !/favicon/.test(m.location().url || '')) errors.push(m.text()); });
    await page.setViewport({ width: 1280, height: 800, deviceScaleFactor: 1 });
    const visit = await open(page, url + '?lang=en');
    console.log('threads: a first visit\'s first frame ' + visit + ' ms after it was asked for (the service worker\'s reload included)');
    const d = new Driver(page);

    await build(d, check, 'threads');
    const first = await firstFrame(d, check);
    const at = args.indexOf('--attnlab');
    if (at >= 0) await compareRender(d, check, args[at + 1], 'en');
    await toggle(d, check, first);
    const workers = await page.evaluate(() => window.attnlabModule._web_worker_jobs(0));
    check(workers > 0, 'threads: after the toggles, ' + workers + ' requests ran on a Web Worker');
    console.log('threads: ' + workers + ' requests ran on Web Workers by the end of the toggles');
    await passingBy(d, check, requested);
    await pageRequests(d, check);
    await lesson4(d, check);
    await lesson16(d, check);
    await tang(d, check);
    await ownModel(d, check, path.join(__dirname, '..', '..', 'assets', 'models'));
    await reload(d, check);
    await chinese(d, check, args.includes('--attnlab') ? args[args.indexOf('--attnlab') + 1] : null);
    await links(d, check, url);
    await everyLesson(d, check, url, 'zh', '', 0);

    if (args.includes('--bench')) {
      /* WEB.md's shape, then the README's `attnlab bench` table (its seq 2048 row needs more than the page's 2 GB) */
      const shapes = [[1, 256, 256, 8, 8, 20], [1, 1024, 1024, 16, 4, 5], [1, 256, 512, 8, 2, 20]];
      for (const [b, sq, dm, h, g, reps] of shapes) {
        const ms = await page.evaluate((a) => window.attnlabModule._web_bench(...a), [b, sq, dm, h, g, reps]);
        check(ms > 0, 'web_bench failed at ' + [b, sq, dm, h, g]);
        console.log('bench: ' + ms.toFixed(2) + ' ms per traced forward in wasm (batch ' + b + ', seq ' + sq + ', d_model ' + dm +
                    ', heads ' + h + ', kv_heads ' + g + '; median of ' + reps + ')');
      }
    }
    const [off, on] = await page.evaluate(() => [window.attnlabModule._web_worker_jobs(0), window.attnlabModule._web_worker_jobs(1)]);
    console.log('threads: ' + off + ' requests ran on Web Workers, ' + on + ' on the page\'s thread (no Worker free) since the last load');
    busiest(d, check, 'threads');

    /* the single-threaded build, as a page whose service worker is blocked loads it (after its one
     * reload, to no avail): a shorter run; ?threads=0 asks for it on an isolated page too */
    const single = await browser.newPage();
    single.on('pageerror', (e) => errors.push(e.message));
    single.on('console', (m) => { if (m.type() === 'error' && !/favicon/.test(m.location().url || '')) errors.push(m.text()); });
    await single.setViewport({ width: 1280, height: 800, deviceScaleFactor: 1 });
    await single.setBypassServiceWorker(true);
    console.log('single: a first visit\'s first frame ' + (await open(single, url + '?lang=en')) + ' ms after it was asked for');
    const s1 = new Driver(single);
    check((await build(s1, check, 'single')) === -1, 'single: web_worker_jobs is not -1');
    check(!(await single.evaluate(() => window.crossOriginIsolated)), 'single: the page is isolated with its service worker blocked');

    await toggle(s1, check, await firstFrame(s1, check));
    await lesson16(s1, check);
    await tang(s1, check);
    busiest(s1, check, 'single');
    await single.close(); /* a tab behind another draws no frames */
    await open(page, url + '?lesson=4&step=2&lang=en&threads=0'); /* a link in the single-threaded build, too */
    await build(d, check, 'single');
    check(await d.tab(/^04 The causal mask · step 2\/9 — attnlab$/) && /[?]lesson=04&step=2&lang=en&threads=0$/.test(page.url()),
          'single: the link to lesson 4 step 2: "' + (await page.title()) + '", ' + page.url());
    await everyLesson(d, check, url, 'en', '&threads=0', 1);
    for (const e of errors) failures.push('page: ' + e);
  } finally {
    await browser.close();
    py.kill();
  }
  for (const f of failures) console.log('FAIL: ' + f);
  console.log(failures.length ? failures.length + ' check(s) failed' : 'web: all checks passed');
  process.exit(failures.length ? 1 : 0);
}

main().catch((e) => die(e.stack || String(e)));
