#!/usr/bin/env node
/* test_web_load.js — how the web page loads (issue 35): what a first visit
 * downloads, how soon it draws on a slow network, models downloaded when
 * opened, offline, installable.
 *
 *   node tests/web/test_web_load.js BUILD_WEB [--before]
 *
 * Serves BUILD_WEB with a small server of its own on 127.0.0.1, which counts
 * the bytes of every answer (what a first visit costs, what a model costs)
 * and can be stopped mid-test; drives Debian's headless chromium with
 * puppeteer-core, as test_web.js does:
 *   - a first visit in a fresh profile at 10 Mbit/s with 40 ms latency (the
 *     server's pacing, see serve): the time to the first frame printed, the bytes downloaded with no model
 *     opened under FIRST_VISIT_BUDGET, a loading view (never the canvas's
 *     black 300×150) before it;
 *   - o on that page downloads the model it opens, still throttled: frames
 *     with the "opening …" notice's "downloading brown: x of y MB" in
 *     between, then the model on screen; each model's download printed;
 *   - a link to lesson 16: its training checkpoints downloaded, and the
 *     lesson opens by itself at step 1; J on brown-induction opened by o
 *     brings them in too (from the cache) and steps back to the last one;
 *   - the manifest (name, icons at 192 and 512 px, start_url, display) and the
 *     favicon served, and no answer a 404;
 *   - a new build's sw.js (another version) replaces the cache of the old one;
 *   - the server stopped: a reload shows the page, and a link to a lesson
 *     whose model was opened before opens it (the service worker's cache); a
 *     lesson whose model was never opened says, in words, that it could not
 *     be downloaded.
 * --before: the first visit only (for a build from before this test). Exit 0
 * when every check passes, 1 with one line per failure, 2 when it cannot run. */
'use strict';

const fs = require('fs');
const http = require('http');
const path = require('path');
const zlib = require('zlib');
const puppeteer = require('puppeteer-core');

const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const TIMEOUT_MS = 30000;
const FIRST_VISIT_BUDGET = 3e6; /* bytes, with no model opened */
const TYPES = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.wasm': 'application/wasm',
                '.json': 'application/json', '.webmanifest': 'application/manifest+json', '.png': 'image/png',
                '.ico': 'image/x-icon', '.ttf': 'font/ttf', '.txt': 'text/plain; charset=utf-8' };

const args = process.argv.slice(2);
const dir = args[0];
const failures = [];
const check = (ok, msg) => { if (!ok) failures.push(msg); return ok; };
const mb = (n) => (n / 1e6).toFixed(2) + ' MB';
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function die(msg) {
  console.error('test_web_load: ' + msg);
  process.exit(2);
}

/* A static server that counts what it sends: bytes by path, and the 404s. With net.slow, it sends as a
 * 10 Mbit/s link with 40 ms latency would: each answer starts 40 ms late, and the answers share the
 * link's bytes per second, 16 kB at a time. (Chrome's own emulation, CDP Network.emulateNetworkConditions
 * on the page, does not reach the service worker's requests, which carry nearly all the bytes: a
 * first visit of 19.8 MB drew in 3.4 s with it. The server's pacing throttles every request.) */
const net = { slow: false, freeAt: 0 };
const LINK = { latencyMs: 40, bytesPerMs: 10e6 / 8 / 1000, chunk: 16384 };

function paced(res, data) {
  let at = 0;
  const next = () => {
    if (at >= data.length) { res.end(); return; }
    const part = data.subarray(at, at + LINK.chunk);
    at += part.length;
    const now = Date.now();
    net.freeAt = Math.max(now, net.freeAt) + part.length / LINK.bytesPerMs;
    setTimeout(() => { if (!res.destroyed) { res.write(part); next(); } }, net.freeAt - now);
  };
  setTimeout(next, LINK.latencyMs);
}

/* As a static host serves them: text, scripts, wasm and fonts gzipped when the browser asks for it
 * (test_web.js weighs the page so too); the data and the models' weights as they are. */
const zipped = new Map();
function gzipped(file) {
  if (!zipped.has(file)) zipped.set(file, zlib.gzipSync(fs.readFileSync(file), { level: 6 }));
  return zipped.get(file);
}

function serve(dir) {
  const root = path.resolve(dir);
  const log = { bytes: new Map(), missing: [], raw: 0 };
  const replaced = new Map(); /* path → text served in its place (a new build's sw.js) */
  const sockets = new Set();
  const server = http.createServer((req, res) => {
    const rel = decodeURIComponent(new URL(req.url, 'http://x').pathname).replace(/^\/+/, '') || 'index.html';
    if (replaced.has(rel)) {
      res.writeHead(200, { 'Content-Type': TYPES[path.extname(rel)], 'Cache-Control': 'no-cache' });
      res.end(replaced.get(rel));
      return;
    }
    const file = path.join(root, rel);
    if (!file.startsWith(root + path.sep) || !fs.existsSync(file) || !fs.statSync(file).isFile()) {
      log.missing.push(rel);
      res.writeHead(404, { 'Content-Type': 'text/plain' });
      res.end('not found');
      return;
    }
    const modified = fs.statSync(file).mtime;
    modified.setMilliseconds(0);
    const since = Date.parse(req.headers['if-modified-since'] || '');
    if (since && modified.getTime() <= since) { /* as python3 -m http.server and static hosts answer */
      res.writeHead(304, { 'Last-Modified': modified.toUTCString() });
      res.end();
      return;
    }
    const type = TYPES[path.extname(file)] || 'application/octet-stream';
    const zip = /\bgzip\b/.test(req.headers['accept-encoding'] || '') && type !== 'application/octet-stream' && !/png/.test(type);
    const data = zip ? gzipped(file) : fs.readFileSync(file);
    log.raw += fs.statSync(file).size;
    res.writeHead(200, { 'Last-Modified': modified.toUTCString(), 'Content-Type': type, 'Content-Length': data.length,
                         'Cache-Control': 'no-cache', ...(zip ? { 'Content-Encoding': 'gzip' } : {}) });
    if (net.slow) paced(res, data);
    else res.end(data);
    log.bytes.set(rel, (log.bytes.get(rel) || 0) + data.length);
  });
  server.on('connection', (s) => { sockets.add(s); s.on('close', () => sockets.delete(s)); });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({
    url: 'http://127.0.0.1:' + server.address().port + '/', log, replaced,
    total: (re) => [...log.bytes].filter(([p]) => !re || re.test(p)).reduce((n, [, b]) => n + b, 0),
    stop: () => new Promise((r) => { server.close(r); for (const s of sockets) s.destroy(); }),
  })));
}

async function stats(page) {
  return page.evaluate(() => (window.attnlabStats ? { frames: window.attnlabStats.frames, title: window.attnlabStats.appTitle,
                                                      texts: window.attnlabStats.texts } : null)).catch(() => null);
}

/* until fn(stats) is true (polled every 40 ms, each frame's texts looked at by seen); false after ms */
async function until(page, fn, ms, seen) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    const s = await stats(page);
    if (s && seen) seen(s);
    if (s && fn(s)) return true;
    await sleep(40);
  }
  return false;
}

/* a first visit, throttled: the time to the first frame, the bytes, the loading view meanwhile */
async function firstVisit(browser, srv) {
  const ctx = await browser.createBrowserContext();
  const page = await ctx.newPage();
  await page.setViewport({ width: 1280, height: 800, deviceScaleFactor: 1 });
  net.slow = true;
  const t0 = Date.now();
  let loadingSeen = false, blackBox = false;
  await page.goto(srv.url + '?lang=en', { waitUntil: 'domcontentloaded', timeout: TIMEOUT_MS });
  const end = t0 + 60000;
  for (;;) {
    const v = await page.evaluate(() => {
      const l = document.getElementById('loading'), c = document.getElementById('attnlab');
      const shown = (e) => !!e && !e.hidden && getComputedStyle(e).visibility !== 'hidden' && e.getBoundingClientRect().width > 0;
      const r = c ? c.getBoundingClientRect() : null;
      return { frames: window.attnlabStats ? window.attnlabStats.frames : 0, loading: shown(l),
               black: !!r && shown(c) && Math.round(r.width) === 300 && Math.round(r.height) === 150 };
    }).catch(() => ({ frames: 0, loading: false, black: false }));
    if (v.frames > 0) break;
    loadingSeen = loadingSeen || v.loading;
    blackBox = blackBox || v.black;
    if (Date.now() > end) { check(false, 'first visit: no frame within 60 s at 10 Mbit/s'); break; }
    await sleep(30);
  }
  const ms = Date.now() - t0;
  await sleep(1500); /* what the page still fetches once it is up */
  const bytes = srv.total();
  console.log('first visit at 10 Mbit/s, 40 ms latency: first frame ' + ms + ' ms after it was asked for; ' + mb(bytes) +
              ' downloaded, ' + mb(srv.log.raw) + ' before compression (' + [...srv.log.bytes].map(([p, b]) => p + ' ' + (b / 1e3).toFixed(0) + ' kB').join(', ') + ')');
  return { ctx, page, ms, bytes, loadingSeen, blackBox };
}

/* o, throttled: the model's download behind the notice, then the model */
async function openModel(page, srv) {
  const before = srv.total(/^models\//);
  let progress = 0;
  const seen = (s) => { if (s.texts.some((t) => /^downloading brown: \d+\.\d of \d+\.\d MB$/.test(t))) progress++; };
  await page.focus('#attnlab');
  await page.keyboard.press('o');
  const opened = await until(page, (s) => /^attnlab - brown - /.test(s.title), TIMEOUT_MS, seen);
  const got = srv.total(/^models\//) - before;
  console.log('o: brown opened after ' + progress + ' looks at the download\'s progress; ' + mb(got) + ' downloaded');
  check(opened, 'o: brown never opened');
  check(progress >= 2, 'o: the notice showed the download\'s progress ' + progress + ' times (2 at least)');
  check(got > 1e6, 'o: brown\'s weights were not downloaded (' + got + ' bytes)');
}

/* a link to lesson 16: its checkpoints downloaded, and the lesson opens at step 1 by itself */
async function lesson16(page, srv) {
  const t0 = Date.now();
  let progress = false;
  await page.goto(srv.url + '?lesson=16&lang=en', { waitUntil: 'domcontentloaded', timeout: TIMEOUT_MS });
  const opened = await until(page, (s) => /brown-induction .*lesson step 1\/\d+$/.test(s.title), TIMEOUT_MS,
                             (s) => { progress = progress || s.texts.some((t) => /^downloading brown-induction: /.test(t)); });
  const ckpt = srv.total(/^checkpoints\//);
  console.log('lesson 16 by a link: opened in ' + (Date.now() - t0) + ' ms, ' + mb(ckpt) + ' of checkpoints downloaded' +
              (progress ? ', the progress shown' : ''));
  check(opened, 'lesson 16 by a link did not open at step 1 by itself');
  check(ckpt > 10e6, 'lesson 16: its checkpoints were not downloaded (' + ckpt + ' bytes)');
  const s = await stats(page);
  check(s && !s.texts.some((t) => /\/attnlab\//.test(t)), 'lesson 16: the frame shows an internal path');
}

/* J on brown-induction opened by o, its checkpoints not in this page yet: they come, then the step */
async function jKey(page, srv) {
  await page.goto(srv.url + '?lang=en', { waitUntil: 'domcontentloaded', timeout: TIMEOUT_MS });
  await until(page, (s) => s.frames > 0, TIMEOUT_MS);
  await page.focus('#attnlab');
  for (const want of [/^attnlab - brown - /, /^attnlab - brown-induction - /]) {
    await page.keyboard.press('o');
    check(await until(page, (s) => want.test(s.title), TIMEOUT_MS), 'o did not open ' + want.source);
  }
  await page.keyboard.down('Shift');
  await page.keyboard.press('J');
  await page.keyboard.up('Shift');
  /* the training line shows only once the model's checkpoints are here; J from the final model: its last one */
  const stepped = await until(page, (s) => s.texts.some((t) => /^training step 3000 of 3000/.test(t)), TIMEOUT_MS);
  console.log('J on brown-induction opened by o: ' + (stepped ? 'its checkpoints brought in, at its last, step 3000' : 'not stepped'));
  check(stepped, 'J on brown-induction (opened by o) did not bring its checkpoints and step to its last');
}

function get(url) {
  return new Promise((resolve) => http.get(url, (r) => {
    const parts = [];
    r.on('data', (d) => parts.push(d));
    r.on('end', () => resolve({ status: r.statusCode, type: r.headers['content-type'], body: Buffer.concat(parts) }));
  }).on('error', () => resolve({ status: 0, body: Buffer.alloc(0) })));
}

async function installable(srv, page) {
  const link = await page.evaluate(() => [document.querySelector('link[rel=manifest]')?.getAttribute('href'),
                                          document.querySelector('link[rel=icon]')?.getAttribute('href')]);
  check(link[0] && link[1], 'the page names no manifest or icon: ' + link);
  const m = await get(srv.url + (link[0] || 'manifest.webmanifest'));
  let man = {};
  try { man = JSON.parse(m.body.toString()); } catch (e) { check(false, 'the manifest is not JSON: ' + e.message); }
  check(man.name && man.short_name && man.start_url && man.display === 'standalone' && man.theme_color,
        'the manifest lacks a name, short_name, start_url, display standalone or theme_color');
  for (const size of [192, 512]) {
    const icon = (man.icons || []).find((i) => i.sizes === size + 'x' + size);
    const r = icon ? await get(new URL(icon.src, srv.url).href) : { status: 0, body: Buffer.alloc(0) };
    const w = r.body.length > 24 ? r.body.readUInt32BE(16) : 0;
    check(r.status === 200 && w === size, 'the manifest\'s ' + size + ' px icon: HTTP ' + r.status + ', ' + w + ' px wide');
  }
  const fav = await get(srv.url + 'favicon.ico');
  check(fav.status === 200 && fav.body.length > 0, 'favicon.ico: HTTP ' + fav.status);
  console.log('manifest "' + man.name + '" (' + (man.icons || []).map((i) => i.sizes).join(', ') + '), favicon ' +
              fav.body.length + ' bytes');
}

/* a new build (its sw.js with another version) replaces the cache of the one before */
async function newBuild(page, srv) {
  const caches = () => page.evaluate(() => caches.keys()).catch(() => []);
  const before = await caches();
  const sw = fs.readFileSync(path.join(dir, 'sw.js'), 'utf8').replace(/const VERSION = '[^']*'/, "const VERSION = 'next-build'");
  srv.replaced.set('sw.js', sw);
  let after = before;
  for (let i = 0; i < 3 && !(after.length === 1 && after[0] === 'attnlab-next-build'); i++) {
    await page.reload({ waitUntil: 'domcontentloaded', timeout: TIMEOUT_MS });
    await until(page, (s) => s.frames > 0, TIMEOUT_MS);
    await sleep(1000);
    after = await caches();
  }
  console.log('a new build: the caches ' + JSON.stringify(before) + ' became ' + JSON.stringify(after));
  check(before.length === 1 && after.length === 1 && after[0] === 'attnlab-next-build',
        'a new build\'s sw.js did not replace the cache: ' + JSON.stringify(before) + ' then ' + JSON.stringify(after));
}

/* a lesson on tang opened online, the server stopped, then a reload and a link to it */
async function offline(page, srv) {
  await page.goto(srv.url + '?lesson=03&lang=en', { waitUntil: 'domcontentloaded', timeout: TIMEOUT_MS });
  const online = await until(page, (s) => /^03 /.test(s.title) || /lesson step 1\//.test(s.title), TIMEOUT_MS);
  check(online, 'lesson 3 by a link did not open online');
  await srv.stop();
  const t0 = Date.now();
  await page.reload({ waitUntil: 'domcontentloaded', timeout: TIMEOUT_MS }).catch((e) => check(false, 'offline reload: ' + e.message));
  const drawn = await until(page, (s) => s.frames > 0, TIMEOUT_MS);
  const lesson = drawn && await until(page, (s) => /lesson step 1\//.test(s.title), TIMEOUT_MS);
  const title = await page.title().catch(() => '');
  console.log('offline: ' + (drawn ? 'a frame ' : 'no frame ') + (Date.now() - t0) + ' ms after the reload; the tab "' + title + '"');
  check(drawn, 'offline: the reload drew no frame (server stopped)');
  check(lesson && /^03 /.test(title), 'offline: lesson 3 did not open again: "' + title + '"');
  /* a lesson on a model never opened: it says so in words, not with a path */
  await page.goto(srv.url + '?lesson=13&lang=en', { waitUntil: 'domcontentloaded', timeout: TIMEOUT_MS }).catch(() => {});
  let said = '';
  await until(page, (s) => !!(said = s.texts.find((t) => /could not be downloaded/.test(t)) || ''), TIMEOUT_MS);
  console.log('offline, lesson 13 (tang-nocausal never opened): "' + said + '"');
  check(/^tang-nocausal could not be downloaded \(no connection\): check the connection/.test(said),
        'offline: lesson 13 does not say its model could not be downloaded: "' + said + '"');
  const s = await stats(page);
  check(s && !s.texts.some((t) => /\/attnlab\//.test(t)), 'offline: the frame shows an internal path');
}

async function main() {
  if (!dir || !fs.existsSync(path.join(dir, 'index.html'))) die('usage: test_web_load.js BUILD_WEB [--before] (no index.html there)');
  if (!fs.existsSync(CHROMIUM)) die(CHROMIUM + ' not found (apt-get install chromium, or CHROMIUM=...)');
  const t0 = Date.now();
  const srv = await serve(dir);
  const browser = await puppeteer.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu'] });
  try {
    const first = await firstVisit(browser, srv);
    if (!args.includes('--before')) {
      check(first.bytes < FIRST_VISIT_BUDGET, 'a first visit downloads ' + mb(first.bytes) + ', over ' + mb(FIRST_VISIT_BUDGET));
      check(!srv.total(/^(models|checkpoints)\//), 'a first visit downloaded a model');
      check(first.loadingSeen, 'no loading view while the page loads');
      check(!first.blackBox, 'a black 300×150 canvas while the page loads');
      await openModel(first.page, srv);
      net.slow = false;
      await lesson16(first.page, srv);
      await jKey(first.page, srv);
      await installable(srv, first.page);
      check(!srv.log.missing.length, 'answered 404: ' + srv.log.missing.join(', '));
      await newBuild(first.page, srv);
      await offline(first.page, srv);
    }
    await first.ctx.close();
  } finally {
    await browser.close();
    await srv.stop().catch(() => {});
  }
  console.log('test_web_load: ' + ((Date.now() - t0) / 1000).toFixed(1) + ' s');
  for (const f of failures) console.log('FAIL: ' + f);
  console.log(failures.length ? failures.length + ' check(s) failed' : 'web load: all checks passed');
  process.exit(failures.length ? 1 : 0);
}

main().catch((e) => die(e.stack || String(e)));
