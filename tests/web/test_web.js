#!/usr/bin/env node
/* test_web.js — the web page (issue 24) in Debian's headless Chromium.
 *
 *   node tests/web/test_web.js BUILD_WEB [--bench]
 *
 * Serves BUILD_WEB (`make web`'s site) with python3's http.server on
 * 127.0.0.1, opens it with puppeteer-core (package.json pins it; it drives
 * /usr/bin/chromium and downloads no browser), and checks:
 *   - the first frame shows the built-in example: the canvas is not blank,
 *     the toolbar says "attnlab" and "causal on", the stage is "weights";
 *   - c toggles the causal mask: the frame changes and says "causal off";
 *   - a lesson opened from the picker (l, Enter) is in localStorage, and
 *     after a reload the picker shows it begun ("step N / M").
 * Prints the first-frame and toggle times; with --bench also the engine's
 * forward in wasm (web_bench) at the attention shape of WEB.md. Exit 0 when
 * every check passes, 1 with one line per failure, 2 when it cannot run. */
'use strict';

const { spawn } = require('child_process');
const fs = require('fs');
const path = require('path');
const puppeteer = require('puppeteer-core');

const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const TIMEOUT_MS = 60000;

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

function stats(page) {
  return page.evaluate(() => window.attnlabStats);
}

async function main() {
  const args = process.argv.slice(2);
  const dir = args.find((a) => !a.startsWith('--'));
  if (!dir) die('usage: test_web.js BUILD_WEB [--bench]');
  for (const f of ['index.html', 'canvas.js', 'attnlab.js', 'attnlab.wasm', 'attnlab.data'])
    if (!fs.existsSync(path.join(dir, f))) die(path.join(dir, f) + ' is missing: run `make web` first');
  if (!fs.existsSync(CHROMIUM)) die(CHROMIUM + ' is missing: apt-get install chromium');

  const failures = [];
  const check = (ok, what) => { if (!ok) failures.push(what); };
  const { py, url } = await serve(dir);
  const browser = await puppeteer.launch({ executablePath: CHROMIUM, headless: true,
                                           args: ['--no-sandbox', '--disable-gpu'] });
  try {
    const page = await browser.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('console', (m) => { if (m.type() === 'error' && !/favicon/.test(m.location().url || '')) errors.push(m.text()); });
    await page.setViewport({ width: 1280, height: 800, deviceScaleFactor: 1 });
    await page.goto(url + '?lang=en', { waitUntil: 'load', timeout: TIMEOUT_MS });
    await page.waitForFunction(() => window.attnlabStats && window.attnlabStats.frames > 0, { timeout: TIMEOUT_MS });

    let s = await stats(page);
    const first = await picture(page);
    check(first.colours >= 20, 'first frame: only ' + first.colours + ' colours: the canvas looks blank');
    check(s.texts.includes('attnlab'), 'first frame: no "attnlab" in the toolbar');
    check(s.texts.some((t) => /causal on/.test(t)), 'first frame: the built-in example is not causal ("causal on" missing)');
    check(s.texts.some((t) => /^weights\b/.test(t)), 'first frame: not on the weights stage');
    check((await page.title()).startsWith('attnlab'), 'the page title is "' + (await page.title()) + '"');
    if (process.env.ATTNLAB_WEB_SHOT) await page.screenshot({ path: process.env.ATTNLAB_WEB_SHOT });
    console.log('first frame: ' + s.firstFrameMs.toFixed(0) + ' ms after the page began');

    const frames = s.frames;
    await page.keyboard.press('c');
    const redrawn = await page.waitForFunction((n) => window.attnlabStats.frames > n, { timeout: 10000 }, frames)
      .then(() => true, () => false);
    check(redrawn, 'c: no frame followed the key within 10 s');
    s = await stats(page);
    const toggled = await picture(page);
    check(toggled.hash !== first.hash, 'c: the frame did not change');
    check(s.texts.some((t) => /causal off/.test(t)), 'c: the toolbar does not say "causal off"');
    if (redrawn) console.log('toggle (c, causal mask): ' + s.inputToFrameMs.toFixed(1) + ' ms from the key to the frame drawn');

    /* a lesson opened from the picker is kept in localStorage, and the picker shows it after a reload */
    const key = async (k) => {
      const n = (await stats(page)).frames;
      await page.keyboard.press(k);
      return page.waitForFunction((m) => window.attnlabStats.frames > m, { timeout: 10000 }, n).then(() => true, () => false);
    };
    check(await key('l') && await key('Enter'), 'l, Enter: no frame followed the keys');
    const kept = await page.waitForFunction(() => /00-arrows/.test(localStorage.getItem('attnlab.progress') || ''),
                                            { timeout: 10000 }).then(() => true, () => false);
    check(kept, 'lesson 0 opened: its progress is not in localStorage');
    await page.reload({ waitUntil: 'load', timeout: TIMEOUT_MS });
    await page.waitForFunction(() => window.attnlabStats && window.attnlabStats.frames > 0, { timeout: TIMEOUT_MS });
    await key('l');
    s = await stats(page);
    check(s.texts.some((t) => /^step \d+ \/ \d+/.test(t)), 'after a reload the picker does not show lesson 0 begun');

    if (args.includes('--bench')) {
      /* WEB.md's shape: s = 256, h = 8, d = 256, one batch row */
      const ms = await page.evaluate(() => window.attnlabModule._web_bench(1, 256, 256, 8, 20));
      check(ms > 0, 'web_bench failed');
      console.log('bench: ' + ms.toFixed(2) + ' ms per traced forward in wasm (batch 1, seq 256, d_model 256, heads 8; median of 20)');
    }
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
