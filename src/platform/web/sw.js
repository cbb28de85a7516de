/* sw.js — the page's service worker: cross-origin isolation on any static
 * host, and the site kept for offline visits.
 *
 * Isolation. The threaded build (attnlab-mt.js) needs SharedArrayBuffer,
 * which a browser gives a page only when its document came with
 *   Cross-Origin-Opener-Policy: same-origin
 *   Cross-Origin-Embedder-Policy: require-corp
 * Most static hosts (python3 -m http.server, GitHub Pages) send neither. This
 * worker, registered by canvas.js, answers the site's own requests itself,
 * with the host's response and those two headers added; the page reloads once
 * to be served through it. Requests to other origins are not touched (the page
 * makes none).
 *
 * Offline. Every file of the site the page fetched (the page, the module of
 * the build it runs, its data with the lessons, the fonts, the icons, and
 * each model's files once the app opened it) is kept in a cache named after
 * the build (VERSION, written by src/platform/web/CMakeLists.txt). The page's
 * own files go to the host first and come from the cache when the host
 * cannot be reached; a model's files, which do not change within a build,
 * come from the cache first. A new build is a new sw.js: it takes over at
 * once and drops the caches of the builds before it. */
'use strict';

const VERSION = '@ATTNLAB_WEB_VERSION@';
const CACHE = 'attnlab-' + VERSION;
const ISOLATION = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
};

/* a new version takes over at once, and the pages open now with it */
self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', (e) => e.waitUntil((async () => {
  for (const name of await caches.keys())
    if (name.startsWith('attnlab-') && name !== CACHE) await caches.delete(name);
  await self.clients.claim();
})()));

function isolated(r) {
  if (r.type === 'opaque' || r.type === 'opaqueredirect' || r.status === 0) return r;
  const headers = new Headers(r.headers);
  for (const [k, v] of Object.entries(ISOLATION)) headers.set(k, v);
  return new Response(r.body, { status: r.status, statusText: r.statusText, headers });
}

/* the host's answer, isolated, and a copy kept when it is a whole file */
async function fromHost(request) {
  const r = isolated(await fetch(request));
  if (request.method === 'GET' && r.status === 200 && !request.headers.has('range')) {
    const copy = r.clone();
    caches.open(CACHE).then((c) => c.put(request, copy)).catch(() => { /* full, or private mode */ });
  }
  return r;
}

/* the copy kept of a page's file: its address without the query (?lesson=7&step=3 is the same page) */
async function kept(request) {
  const c = await caches.open(CACHE);
  return (await c.match(request)) || (await c.match(request, { ignoreSearch: true }));
}

async function answer(request) {
  const path = new URL(request.url).pathname;
  const fixed = /\/(models|checkpoints)\//.test(path); /* a model's files: the same within a build */
  if (fixed) {
    const r = await kept(request);
    if (r) return r;
  }
  try {
    return await fromHost(request);
  } catch (e) {
    const r = fixed ? null : await kept(request);
    if (r) return r;
    throw e;
  }
}

self.addEventListener('fetch', (e) => {
  const request = e.request;
  if (new URL(request.url).origin !== self.location.origin) return;
  /* a request the browser may only answer from its cache: left to it */
  if (request.cache === 'only-if-cached' && request.mode !== 'same-origin') return;
  e.respondWith(answer(request));
});
