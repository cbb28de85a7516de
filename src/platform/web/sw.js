/* sw.js — the page's service worker: cross-origin isolation on any static host.
 *
 * The threaded build (attnlab-mt.js) needs SharedArrayBuffer, which a browser
 * gives a page only when its document came with
 *   Cross-Origin-Opener-Policy: same-origin
 *   Cross-Origin-Embedder-Policy: require-corp
 * Most static hosts (python3 -m http.server, GitHub Pages) send neither. This
 * worker, registered by canvas.js, answers the site's own requests itself,
 * with the host's response and those two headers added; the page reloads once
 * to be served through it. Requests to other origins are not touched (the page
 * makes none). It keeps nothing: every request still goes to the host. */
'use strict';

const ISOLATION = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
};

/* a new version takes over at once, and the pages open now with it */
self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', (e) => e.waitUntil(self.clients.claim()));

async function isolated(request) {
  const r = await fetch(request);
  if (r.type === 'opaque' || r.type === 'opaqueredirect' || r.status === 0) return r;
  const headers = new Headers(r.headers);
  for (const [k, v] of Object.entries(ISOLATION)) headers.set(k, v);
  return new Response(r.body, { status: r.status, statusText: r.statusText, headers });
}

self.addEventListener('fetch', (e) => {
  const request = e.request;
  if (new URL(request.url).origin !== self.location.origin) return;
  /* a request the browser may only answer from its cache: left to it */
  if (request.cache === 'only-if-cached' && request.mode !== 'same-origin') return;
  e.respondWith(isolated(request));
});
