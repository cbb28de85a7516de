/* canvas.js — the web page's drawing backend and event source (issue 24).
 *
 * The JavaScript side of main_web.c: it measures text for the app core, turns
 * the browser's keyboard, mouse, wheel and touch events into the app core's
 * input calls (one finger: app_touch_*), and draws each frame's records (main_web.c's banner gives
 * their layout) on a <canvas> in device pixels (devicePixelRatio). Lesson
 * progress, a file in the page's memory, is kept in localStorage. It downloads
 * the module and its data itself, showing how far in the loading view, and a
 * shipped model's files when the app core first opens the model (modelWant).
 *
 * window.attnlabStats: what the test (tests/web) reads — the first frame's
 * time since the page began, the last input-to-frame time, the last input-to-idle
 * time (its work done, the result taken in: inputToIdleMs), the longest the
 * page was busy in one go (an input call, a frame or the app's turn: the page
 * is frozen that long), whether the app has work under way (pending), and the
 * last frame's texts and pictures with their boxes (a text's [s, x, y, w, h,
 * seen]: seen false where a scrolled panel's clip hides it), the app's own title
 * (appTitle: the desktop window's; the tab shows a lesson's own, see links
 * below), and which build of the module runs (build: 'threads' or 'single').
 *
 * Two builds of the module ship (main_web.c's banner): attnlab-mt.js, the
 * engine on Web Workers, needs SharedArrayBuffer, which a browser gives only
 * to a cross-origin isolated page (the COOP and COEP headers). Most static
 * hosts do not send those, so the page registers sw.js, its service worker,
 * which adds them to the site's own responses, and reloads once when it has
 * taken over. A page that is not isolated even so (no service workers: a
 * browser's setting, or http:// other than localhost) loads attnlab.js, one
 * thread; ?threads=0 asks for that one. */
'use strict';

(function () {
  const KIND = { RECT: 0, FRAME: 1, LINE: 2, TEXT: 3, POLY: 6, CLIP_PUSH: 7, CLIP_POP: 8, IMAGE: 100 };
  const FONT = '"DejaVu Sans", "WenQuanYi Micro Hei", "Noto Sans CJK SC", sans-serif';
  const PROGRESS_DIR = '/state/attnlab', PROGRESS_FILE = PROGRESS_DIR + '/progress.json';
  const PROGRESS_KEY = 'attnlab.progress', LANG_KEY = 'attnlab.lang';
  /* the app core's key codes (keys.h) of the browser's named keys */
  const KEYS = {
    ArrowLeft: 256, ArrowRight: 257, ArrowUp: 258, ArrowDown: 259, Home: 260, End: 261,
    PageUp: 262, PageDown: 263, F1: 264, F5: 265, Enter: 13, Escape: 27, Backspace: 8,
    Delete: 127, Tab: 9, ' ': 32,
  };
  const MOD_SHIFT = 1, MOD_CTRL = 2, MOD_ALT = 4;

  const stats = (window.attnlabStats = { started: performance.now(), firstFrameMs: null, inputToFrameMs: null, inputToIdleMs: null,
                                         longestBusyMs: 0, pending: false, measured: 0, frames: 0, texts: [], boxes: [], images: [],
                                         build: null, appTitle: '', modelFetches: [] });
  const canvas = document.getElementById('attnlab');
  const ctx = canvas.getContext('2d', { alpha: false });
  const measureCtx = document.createElement('canvas').getContext('2d');
  const scratch = document.createElement('canvas');
  const widths = new Map(), advances = new Map(); /* a string's width; a character's advance */
  const last = { f: '', s: '', sum: 0 }; /* the string measured last */
  let M = null, dpr = 1, dirty = true, inputAt = null, workAt = null, savedProgress = null;
  let images = new Map(); /* serial → canvas holding that picture */

  function font(px, bold) { return (bold ? 'bold ' : '') + px + 'px ' + FONT; }

  /* Text is shaped without kerning or ligatures (plain advances), in measuring and in drawing alike,
   * and a string's width is the sum of its characters' advances, each rounded to a whole pixel as
   * the desktop's SDL_ttf (hinted) gives them: then the page lays a frame out to the pixel as
   * `attnlab render` does (tests/web compares the two). It is also fast: a few hundred measureText
   * calls, each character once, where measuring every new string took 2900 calls (140 ms) for the
   * picker's first frame. The drawn run keeps the font's fractional advances: a long line may end a
   * pixel or two off its measured width. */
  function plain(c) {
    c.fontKerning = 'none';
    c.textRendering = 'optimizeSpeed';
  }

  function textWidth(s, px, bold) {
    const f = (bold ? 'b' : 'r') + px;
    let w = widths.get(f + '\u0000' + s);
    if (w !== undefined) return w;
    let adv = advances.get(f); /* code point → advance, for this font */
    if (!adv) advances.set(f, (adv = new Map()));
    /* the app core wraps a line by measuring its growing prefixes: go on from the last one */
    let sum = 0, i = 0;
    if (last.f === f && s.length > last.s.length && s.startsWith(last.s)) sum = last.sum, i = last.s.length;
    for (; i < s.length; i++) {
      const cp = s.codePointAt(i);
      if (cp > 0xffff) i++;
      let a = adv.get(cp);
      if (a === undefined) {
        measureCtx.font = font(px, bold);
        plain(measureCtx);
        a = measureCtx.measureText(String.fromCodePoint(cp)).width;
        adv.set(cp, a);
        stats.measured++;
      }
      sum += Math.round(a);
    }
    last.f = f, last.s = s, last.sum = sum;
    w = sum;
    if (widths.size > 20000) widths.clear();
    widths.set(f + '\u0000' + s, w);
    return w;
  }

  /* DejaVu Sans's line spacing (ascent + descent: 1.164 em) and ascent (0.928 em), as SDL_ttf gives them:
   * a line's top is at y, its baseline at y + ascent */
  function lineHeight(px) { return Math.ceil(px * 1.164); }
  function ascent(px) { return Math.round(px * 0.928); }

  function colour(argb) {
    return 'rgba(' + ((argb >>> 16) & 255) + ',' + ((argb >>> 8) & 255) + ',' + (argb & 255) + ',' +
           ((argb >>> 24) / 255) + ')';
  }

  function withString(s, fn) {
    const n = M.lengthBytesUTF8(s) + 1, p = M._malloc(n);
    M.stringToUTF8(s, p, n);
    try { return fn(p); } finally { M._free(p); }
  }

  /* ---- drawing a frame */

  function pixels(ptr, w, h) {
    const data = new Uint8ClampedArray(M.HEAPU8.subarray(ptr, ptr + w * h * 4)); /* a copy */
    return new ImageData(data, w, h);
  }

  function image(r, used) {
    const [x, y, w, h, ptr, serial] = [r[1], r[2], r[3], r[4], r[6], r[7]];
    let c = serial ? images.get(serial) : null;
    if (!c) {
      c = serial ? document.createElement('canvas') : scratch;
      c.width = w;
      c.height = h;
      c.getContext('2d').putImageData(pixels(ptr, w, h), 0, 0);
      if (serial) images.set(serial, c);
    }
    if (serial) used.set(serial, c);
    ctx.drawImage(c, x, y);
    stats.images.push([x, y, w, h]);
  }

  /* the clip rectangles in force while a frame is drawn (the innermost last) */
  const clips = [];

  function text(r) {
    const s = M.UTF8ToString(r[6]);
    const c = clips[clips.length - 1], cx = r[1] + r[3] / 2, cy = r[2] + r[4] / 2;
    const seen = !c || (cx >= c[0] && cy >= c[1] && cx < c[0] + c[2] && cy < c[1] + c[3]); /* not clipped away (a scrolled panel) */
    stats.texts.push(s);
    stats.boxes.push([s, r[1], r[2], r[3], r[4], seen]);
    ctx.font = font(r[7], r[8]);
    ctx.fillStyle = colour(r[5] >>> 0);
    if (r[9]) { /* turned: read upwards, in a box a line wide and the text's width tall */
      ctx.save();
      ctx.translate(r[1], r[2] + r[4]);
      ctx.rotate(-Math.PI / 2);
      ctx.fillText(s, 0, ascent(r[7]));
      ctx.restore();
    } else {
      ctx.fillText(s, r[1], r[2] + ascent(r[7]));
    }
  }

  function poly(r, f) {
    ctx.fillStyle = colour(r[5] >>> 0);
    ctx.beginPath();
    for (let i = 0; i < r[6]; i++) {
      if (i) ctx.lineTo(f[8 + 2 * i], f[9 + 2 * i]);
      else ctx.moveTo(f[8], f[9]);
    }
    ctx.closePath();
    ctx.fill();
  }

  /* The threaded build's memory may have grown on a worker: the page's views on it are renewed. */
  function freshViews() {
    const mem = M.wasmMemory;
    if (!mem || M.HEAPU8.buffer === mem.buffer) return;
    M.HEAPU8 = new Uint8Array(mem.buffer);
    M.HEAP32 = new Int32Array(mem.buffer);
    M.HEAPF32 = new Float32Array(mem.buffer);
  }

  function draw() {
    const base = M._web_frame();
    if (!base) return;
    freshViews();
    const words = M._web_rec_words(), n = M.HEAP32[base >> 2];
    const used = new Map();
    clips.length = 0;
    stats.texts = [];
    stats.boxes = [];
    stats.images = [];
    ctx.textBaseline = 'alphabetic';
    plain(ctx);
    for (let i = 0; i < n; i++) {
      const at = (base >> 2) + words * (1 + i);
      const r = M.HEAP32.subarray(at, at + words);
      switch (r[0]) {
        case KIND.RECT:
        case KIND.LINE:
          ctx.fillStyle = colour(r[5] >>> 0);
          ctx.fillRect(r[1], r[2], r[3], r[4]);
          break;
        case KIND.FRAME: {
          const [x, y, w, h, t] = [r[1], r[2], r[3], r[4], r[6]];
          ctx.fillStyle = colour(r[5] >>> 0);
          ctx.fillRect(x, y, w, t);
          ctx.fillRect(x, y + h - t, w, t);
          ctx.fillRect(x, y + t, t, h - 2 * t);
          ctx.fillRect(x + w - t, y + t, t, h - 2 * t);
          break;
        }
        case KIND.TEXT: text(r); break;
        case KIND.POLY: poly(r, M.HEAPF32.subarray(at, at + words)); break;
        case KIND.IMAGE: image(r, used); break;
        case KIND.CLIP_PUSH: {
          ctx.save();
          ctx.beginPath();
          ctx.rect(r[1], r[2], r[3], r[4]);
          ctx.clip();
          const o = clips[clips.length - 1] || [r[1], r[2], r[3], r[4]];
          const x0 = Math.max(o[0], r[1]), y0 = Math.max(o[1], r[2]);
          clips.push([x0, y0, Math.min(o[0] + o[2], r[1] + r[3]) - x0, Math.min(o[1] + o[3], r[2] + r[4]) - y0]);
          break;
        }
        case KIND.CLIP_POP:
          if (clips.length > 0) { ctx.restore(); clips.pop(); }
          break;
      }
    }
    while (clips.length > 0) { ctx.restore(); clips.pop(); }
    images = used; /* pictures not drawn this frame are dropped */
    stats.appTitle = M.UTF8ToString(M._web_title()); /* the desktop window's title */
    follow();
    document.title = link.title || stats.appTitle;
    stats.frames++;
    const now = performance.now();
    if (stats.firstFrameMs === null) {
      stats.firstFrameMs = now - stats.started;
      canvas.classList.remove('loading');
      document.getElementById('loading').hidden = true;
    }
    if (inputAt !== null) { stats.inputToFrameMs = now - inputAt; inputAt = null; }
    keepProgress();
  }

  /* fn's result; how long it kept the page busy goes into stats.longestBusyMs */
  function busy(fn) {
    const t0 = performance.now();
    try { return fn(); } finally { stats.longestBusyMs = Math.max(stats.longestBusyMs, performance.now() - t0); }
  }

  /* A frame: drawn if anything changed. The app's turn between events (web_poll: a request of
   * its job service run, a result taken in) comes after it, in a task of its own, so that a frame
   * saying "opening …" is on screen before the work it announces. */
  function tick() {
    busy(() => {
      if (dirty) {
        dirty = false;
        draw();
      }
    });
    setTimeout(poll, 0);
    requestAnimationFrame(tick);
  }

  function poll() {
    busy(() => {
      const r = M._web_poll(); /* bit 1: a frame wanted, bit 2: work under way */
      stats.pending = !!(r & 2);
      if (r & 1) dirty = true;
    });
    if (!stats.pending && workAt !== null) { stats.inputToIdleMs = performance.now() - workAt; workAt = null; }
  }

  /* ---- size: the canvas fills the window above the page's bar, in device pixels */

  function fit() {
    dpr = window.devicePixelRatio || 1;
    const cw = window.innerWidth, ch = Math.max(1, window.innerHeight - document.getElementById('bar').offsetHeight);
    const w = Math.max(1, Math.round(cw * dpr)), h = Math.max(1, Math.round(ch * dpr));
    canvas.style.width = cw + 'px';
    canvas.style.height = ch + 'px';
    if (canvas.width !== w || canvas.height !== h) {
      canvas.width = w;
      canvas.height = h;
    }
    return [w, h];
  }

  /* ---- the page's bar: its own words, in the interface's language */

  /* The page holds a model three times over while opening it (the file, its copy in the
   * memory file system, the weights the engine reads), in at most 2 GB of wasm memory. */
  const MODEL_LIMIT_MB = 256;

  /* main_web.c's web_words, by index: translated by the app's catalog */
  const WORD = { bar: 0, offline: 1, cut: 2, open: 3, openTitle: 4, tooBig: 5, missing: 6, reading: 7,
                 opened: 8, threads: 9, single: 10, copy: 11, copyTitle: 12, copied: 13, copyThis: 14 };

  /* the page's word w, each %s filled with the next of args */
  function word(w, ...args) {
    let i = 0;
    return M.UTF8ToString(M._web_word(WORD[w])).replace(/%s/g, () => String(args[i++]));
  }

  function mb(bytes) { return (bytes / 1e6).toFixed(1); } /* MB of 10^6 bytes */

  function barNote(s) { document.getElementById('bar-note').textContent = s; }

  /* ---- a student's own model: the file picker, into the memory file system */

  const MODEL_NEEDS = ['config.json', 'model.safetensors', 'tokenizer.json'];
  let models = 0;

  async function openModel(picked) {
    const files = [...picked];
    if (!files.length) return;
    const base = (f) => f.name;
    const bytes = files.reduce((n, f) => n + f.size, 0);
    if (bytes > MODEL_LIMIT_MB * 1e6) return barNote(word('tooBig', mb(bytes), MODEL_LIMIT_MB));
    const absent = MODEL_NEEDS.find((n) => !files.some((f) => base(f) === n));
    if (absent) return barNote(word('missing', absent));
    const name = 'yours-' + ++models; /* the browser does not say which folder the files came from */
    barNote(word('reading', mb(bytes)));
    const dir = '/attnlab/models/' + name;
    M.FS.mkdirTree(dir);
    for (const f of files) {
      M.FS.writeFile(dir + '/' + base(f), new Uint8Array(await f.arrayBuffer()));
    }
    const ok = changed(() => withString(name, (p) => M._web_open_model(p)) === 0);
    barNote(ok ? word('opened', name) : word('bar')); /* else the status line says why */
    canvas.focus();
  }

  function modelPicker() {
    const input = document.getElementById('model-file'), b = document.getElementById('open');
    b.textContent = word('open');
    b.title = word('openTitle', MODEL_LIMIT_MB);
    b.hidden = false;
    b.addEventListener('click', () => input.click());
    input.addEventListener('change', () => { openModel(input.files).catch((e) => barNote(String(e))); input.value = ''; });
  }

  /* ---- shipped models' files, downloaded when the app first opens a model (main_web.c's fetcher,
   * src/app/fetch.h): the weights and tokenizer, and on request the training checkpoints; the
   * model's small files came with the page. models.json (in the page's data) lists them. */

  const MODELS_JSON = '/attnlab/web/models.json', MODELS_DIR = '/attnlab/models/';
  const shipped = { list: null, fetches: new Map(), last: { done: 0, total: 0, why: '' } };
  const FETCH = { HERE: 0, COMING: 1, FAILED: 2 }; /* fetch.h's app_fetch_state */

  function modelList() {
    if (!shipped.list) {
      try { shipped.list = JSON.parse(M.FS.readFile(MODELS_JSON, { encoding: 'utf8' })); } catch (e) { shipped.list = {}; }
    }
    return shipped.list;
  }

  function present(path, size) {
    try { return M.FS.stat(path).size === size; } catch (e) { return false; }
  }

  /* one file into the memory file system, its bytes counted into f as they arrive */
  async function download(f, url, size, to) {
    let r;
    try { r = await fetch(url); } catch (e) { throw new Error(word('offline')); }
    if (!r.ok) throw new Error('HTTP ' + r.status);
    const data = new Uint8Array(size), reader = r.body.getReader();
    let at = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (at + value.length > size) throw new Error(word('cut'));
      data.set(value, at);
      at += value.length;
      f.done += value.length;
    }
    if (at !== size) throw new Error(word('cut'));
    M.FS.mkdirTree(to.slice(0, to.lastIndexOf('/')));
    M.FS.writeFile(to, data);
  }

  /* A model's files not here yet, one after the other. Checkpoints go into checkpoints.part and
   * become checkpoints at the end: the app never sees half of them. */
  async function fetchModel(f, name, files) {
    const dir = MODELS_DIR + name;
    for (const [url, size, to] of files) await download(f, url, size, to);
    if (files.some(([, , to]) => to.startsWith(dir + '/checkpoints.part/'))) {
      if (!M.FS.analyzePath(dir + '/checkpoints').exists) M.FS.rename(dir + '/checkpoints.part', dir + '/checkpoints');
    }
  }

  /* main_web.c's question: model name's files (and its checkpoints) here (0), coming (1) or failed
   * (2, said once: the next question tries again). Its progress: attnModelBytes, attnModelWhy. */
  function modelWant(name, checkpoints) {
    const entry = modelList()[name];
    if (!entry) return FETCH.HERE; /* not one the page ships (a student's own, or none) */
    const key = name + (checkpoints ? '\u0000c' : '');
    let f = shipped.fetches.get(key);
    if (!f) {
      const dir = MODELS_DIR + name;
      const files = entry.files.map(([p, n]) => ['models/' + name + '/' + p, n, dir + '/' + p])
        .concat(checkpoints ? entry.checkpoints.map(([p, n]) => ['checkpoints/' + name + '/' + p, n, dir + '/checkpoints.part/' + p])
                            : [])
        .filter(([, n, to]) => !present(to.replace('/checkpoints.part/', '/checkpoints/'), n));
      f = { state: files.length ? FETCH.COMING : FETCH.HERE, done: 0, total: files.reduce((t, x) => t + x[1], 0), why: '' };
      shipped.fetches.set(key, f);
      if (files.length) {
        stats.modelFetches.push(name + (checkpoints ? '+checkpoints' : ''));
        fetchModel(f, name, files).then(() => { f.state = FETCH.HERE; dirty = true; },
                                        (e) => { f.state = FETCH.FAILED; f.why = e.message || String(e); dirty = true; });
      }
    }
    shipped.last = f;
    if (f.state === FETCH.FAILED) shipped.fetches.delete(key);
    return f.state;
  }

  function modelBytes(total) { return total ? shipped.last.total : shipped.last.done; }
  function modelWhy() { return shipped.last.why; }

  /* ---- links: ?lesson=07&step=3&lang=zh (or #lesson=…) opens that step; the address follows the
   * student, a history entry a step (Back returns to the step before); the tab names the lesson */

  const link = { where: null, title: '' }; /* web_lesson_where's last answer; the tab's title in a lesson */

  /* the address's lesson, step and language: its query, else its fragment */
  function linkParams() {
    const q = new URLSearchParams(location.search);
    if (!q.has('lesson') && location.hash.length > 1) {
      const h = new URLSearchParams(location.hash.slice(1));
      if (h.has('lesson')) return h;
    }
    return q;
  }

  /* the step a link asks for, as written (web_open_lesson reads it: a number from 1; '': the first) */
  function linkStep(q) { return (q.get('step') || '').trim(); }

  /* the address of lesson (its number or name; '' none) at step, in the page's language; the
   * address's other parameters (threads=0) kept */
  function linkURL(lesson, step) {
    const q = new URLSearchParams();
    if (lesson) { q.set('lesson', lesson); q.set('step', step); }
    q.set('lang', language());
    for (const [k, v] of new URLSearchParams(location.search))
      if (!['lesson', 'step', 'lang'].includes(k)) q.append(k, v);
    return location.origin + location.pathname + '?' + q.toString();
  }

  /* whether the address names lesson (web_lesson_where's key: "07", or a name) at step */
  function addressIs(lesson, step) {
    const q = linkParams(), l = (q.get('lesson') || '').trim();
    if (!lesson) return !l;
    const same = /^\d+$/.test(l) && /^\d+$/.test(lesson) ? Number(l) === Number(lesson)
                                                         : l.replace(/\.md$/, '') === lesson || l.startsWith(lesson + '-');
    return same && Number(linkStep(q) || 1) === Number(step);
  }

  /* at start: the lesson the address names, opened at its step */
  function openLinked() {
    const q = linkParams();
    const lesson = q.get('lesson');
    if (lesson === null) return;
    withString(lesson.trim(), (p) => withString(linkStep(q), (s) => changed(() => { M._web_open_lesson(p, s); return 1; })));
  }

  /* after each frame: the address and the tab follow the step on screen. A step the address
   * already names (the link opened, Back) replaces its entry; another one is a new entry. */
  function follow() {
    const at = M._web_lesson_where();
    if (!at) return; /* a lesson is being opened */
    const where = M.UTF8ToString(at);
    if (where === link.where) return;
    const first = link.where === null;
    link.where = where;
    const [lesson, step, , title] = where ? where.split('\t') : ['', 0, 0, ''];
    link.title = title;
    if (!lesson && addressIs('', 0)) return; /* no lesson, and the address names none: it stays as it is */
    const url = linkURL(lesson, step);
    if (url === location.href) return;
    if (first || addressIs(lesson, step)) history.replaceState(null, '', url);
    else history.pushState(null, '', url);
  }

  window.addEventListener('popstate', () => {
    if (!M) return;
    const q = linkParams();
    withString((q.get('lesson') || '').trim(),
               (p) => withString(linkStep(q), (s) => changed(() => { M._web_lesson_goto(p, s); return 1; })));
  });

  /* the bar's "Copy link": the address of the step on screen, to the clipboard; where the browser
   * does not allow that, the address shown in the bar, selected for Ctrl+C */
  function copyButton() {
    const b = document.getElementById('copy');
    b.textContent = word('copy');
    b.title = word('copyTitle');
    b.hidden = false;
    b.addEventListener('click', () => {
      const url = location.href;
      const shown = () => {
        const note = document.getElementById('bar-note'), [before, after] = word('copyThis', '\u0000').split('\u0000');
        const u = document.createElement('span');
        u.textContent = url;
        u.style.userSelect = 'text';
        note.replaceChildren(before, u, after);
        window.getSelection().selectAllChildren(u);
      };
      if (navigator.clipboard && window.isSecureContext)
        navigator.clipboard.writeText(url).then(() => { barNote(word('copied', url)); canvas.focus(); }, shown);
      else shown();
    });
  }

  /* ---- lesson progress: the file the player saves, mirrored in localStorage */

  function loadProgress() {
    M.FS.mkdirTree(PROGRESS_DIR);
    let s = null;
    try { s = localStorage.getItem(PROGRESS_KEY); } catch (e) { /* storage off: progress for this visit only */ }
    if (s !== null) M.FS.writeFile(PROGRESS_FILE, s);
    savedProgress = s;
  }

  function keepProgress() {
    let s;
    try { s = M.FS.readFile(PROGRESS_FILE, { encoding: 'utf8' }); } catch (e) { return; }
    if (s === savedProgress) return;
    savedProgress = s;
    try { localStorage.setItem(PROGRESS_KEY, s); } catch (e) { /* full or off */ }
  }

  /* another tab saved: its file becomes ours, into which the next save merges (as on the desktop) */
  window.addEventListener('storage', (e) => {
    if (e.key !== PROGRESS_KEY || !M || e.newValue === null) return;
    M.FS.writeFile(PROGRESS_FILE, e.newValue);
    savedProgress = e.newValue;
  });

  /* ---- events */

  function mods(e) {
    return (e.shiftKey ? MOD_SHIFT : 0) | (e.ctrlKey ? MOD_CTRL : 0) | (e.altKey ? MOD_ALT : 0);
  }

  /* call: an input call into the app (it may compute at once); whether it changed anything */
  function changed(call) {
    const t0 = performance.now();
    const r = busy(call);
    /* the app may have work under way now: pending until its next turn says (poll) */
    if (r) { dirty = true; stats.pending = true; if (inputAt === null) inputAt = t0; if (workAt === null) workAt = t0; }
    carryOut();
    return r;
  }

  /* ---- what the app asks of the page after an input (web_requests): carried out in the input's
   * own handler, the only place a browser lets a page enter fullscreen */

  let quitNote = false;

  function carryOut() {
    const r = M._web_requests();
    if (quitNote) { showNote(''); quitNote = false; } /* said once, gone with the next input */
    if (r & 1) { showNote(note('quit')); quitNote = true; }
    const want = !!(r & 4), full = !!document.fullscreenElement;
    barShown(!want);
    if (want !== full && document.fullscreenEnabled) {
      const p = want ? document.documentElement.requestFullscreen() : document.exitFullscreen();
      if (p && p.catch) p.catch(() => { M._web_fullscreen(full ? 1 : 0); barShown(!full); dirty = true; });
    }
    if (r & 2) savePicture((r >> 8) & 255);
  }

  /* s: the frame as a PNG download (kind 0); the other kinds (S: SVG, PDF, CSV) are the desktop's */
  function savePicture(kind) {
    if (kind !== 0) { M._web_saved(0, kind); dirty = true; return; }
    if (dirty) { dirty = false; draw(); } /* the frame the key asked for */
    canvas.toBlob((blob) => {
      if (blob) {
        const a = document.createElement('a');
        a.href = URL.createObjectURL(blob);
        a.download = M.UTF8ToString(M._web_save_name());
        document.body.appendChild(a);
        a.click();
        a.remove();
        setTimeout(() => URL.revokeObjectURL(a.href), 60000);
      }
      M._web_saved(blob ? 1 : 0, 0);
      dirty = true;
    }, 'image/png');
  }

  /* fullscreen left with the browser's own Esc: the app follows (presenter mode ends with it) */
  document.addEventListener('fullscreenchange', () => {
    if (M) { M._web_fullscreen(document.fullscreenElement ? 1 : 0); barShown(!document.fullscreenElement); dirty = true; }
  });

  function keyCode(e) {
    if (e.key in KEYS) return KEYS[e.key];
    if (e.key.length === 1 && e.key.charCodeAt(0) > 32 && e.key.charCodeAt(0) < 127)
      return e.key.toLowerCase().charCodeAt(0); /* as SDL's keycodes: letters in lower case */
    return 0;
  }

  window.addEventListener('keydown', (e) => {
    if (!M || e.metaKey || e.isComposing) return;
    if (e.ctrlKey && e.key === 'c' && String(window.getSelection())) return; /* copying the bar's link */
    const k = keyCode(e);
    const wantsText = M._web_wants_text();
    let took = k && changed(() => M._web_key(k, mods(e)));
    /* typed text follows its key, as SDL's text input event follows its key event */
    if (wantsText && e.key.length >= 1 && [...e.key].length === 1 && !e.ctrlKey && !e.altKey)
      took = withString(e.key, (p) => changed(() => M._web_text(p))) || took;
    if (took || k in { 9: 1, 32: 1, 256: 1, 257: 1, 258: 1, 259: 1, 262: 1, 263: 1, 264: 1 }) e.preventDefault();
  });
  window.addEventListener('compositionend', (e) => {
    if (M && e.data) withString(e.data, (p) => changed(() => M._web_text(p)));
  });

  function at(e) {
    const b = canvas.getBoundingClientRect();
    return [Math.round((e.clientX - b.left) * dpr), Math.round((e.clientY - b.top) * dpr)];
  }

  canvas.addEventListener('mousedown', (e) => {
    if (!M || e.button !== 0) return;
    canvas.focus();
    changed(() => M._web_mouse_down(...at(e)));
  });
  canvas.addEventListener('mousemove', (e) => {
    if (!M) return;
    changed(() => e.buttons & 1 ? M._web_mouse_drag(...at(e)) : M._web_mouse_move(...at(e)));
  });
  window.addEventListener('mouseup', (e) => { if (M && e.button === 0) changed(() => M._web_mouse_up()); });
  canvas.addEventListener('mouseleave', () => { if (M) changed(() => M._web_mouse_leave()); });
  canvas.addEventListener('wheel', (e) => {
    if (!M || e.deltaY === 0) return;
    e.preventDefault();
    changed(() => M._web_wheel(e.deltaY < 0 ? 1 : -1)); /* dy > 0: away from the user */
  }, { passive: false });
  /* one finger, to the app core's touch calls: a tap is a click, a drag scrolls the lesson, its quiz
   * and the list of lessons (app_touch_*); the browser's own scrolling and zooming are off (touch-action) */
  let finger = null;
  canvas.addEventListener('touchstart', (e) => {
    if (!M) return;
    e.preventDefault();
    if (finger !== null || e.changedTouches.length !== 1 || e.touches.length !== 1) { /* a second finger: no tap */
      if (finger !== null) { finger = null; changed(() => M._web_touch_cancel()); }
      return;
    }
    finger = e.changedTouches[0].identifier;
    canvas.focus();
    changed(() => M._web_touch_down(...at(e.changedTouches[0])));
  }, { passive: false });
  const ours = (e) => [...e.changedTouches].find((t) => t.identifier === finger);
  canvas.addEventListener('touchmove', (e) => {
    const t = M && finger !== null && ours(e);
    if (!t) return;
    e.preventDefault();
    changed(() => M._web_touch_move(...at(t)));
  }, { passive: false });
  canvas.addEventListener('touchend', (e) => {
    if (!M || finger === null || !ours(e)) return;
    e.preventDefault();
    finger = null;
    changed(() => M._web_touch_up());
  }, { passive: false });
  canvas.addEventListener('touchcancel', () => { if (M && finger !== null) { finger = null; changed(() => M._web_touch_cancel()); } });
  function resized() {
    if (!M) return;
    const [w, h] = fit();
    M._web_resize(w, h, dpr);
    dirty = true;
  }
  window.addEventListener('resize', resized);
  /* the bar wraps on a narrow screen, and its note changes: the canvas takes what it leaves */
  if (window.ResizeObserver) new ResizeObserver(resized).observe(document.getElementById('bar'));

  /* fullscreen and presenter mode: the page's own bar hidden, the canvas the whole screen */
  function barShown(shown) {
    const bar = document.getElementById('bar');
    if (bar.hidden === !shown) return;
    bar.hidden = !shown;
    resized();
  }

  /* ---- start */

  function showNote(s) {
    const note = document.getElementById('note');
    note.textContent = s;
    note.hidden = !s;
  }

  /* What the page says before the app core (and its translations) has started,
   * or after it asked to end: in the language the app core will speak. */
  const NOTES = {
    loading: { en: 'Loading attnlab …', zh: '正在加载 attnlab …' },
    downloading: { en: 'the program and the lessons: %s of %s MB', zh: '程序和课程：%s / %s MB' },
    noStart: { en: 'attnlab could not start: see the browser console.', zh: 'attnlab 无法启动：请查看浏览器的控制台。' },
    noLoad: { en: 'attnlab could not load: ', zh: 'attnlab 无法加载：' },
    quit: { en: 'attnlab asked to quit: close this tab, or go on.', zh: 'attnlab 请求退出：可以关闭这个标签页，也可以继续。' },
  };
  function note(what) { return NOTES[what][language()]; }

  /* the interface language: ?lang= (or #lang= in a link's fragment), else the one last chosen with the button, else the browser's */
  function language() {
    let asked = linkParams().get('lang');
    if (asked !== 'zh' && asked !== 'en') {
      try { asked = localStorage.getItem(LANG_KEY); } catch (e) { asked = null; }
    }
    if (asked === 'zh' || asked === 'en') return asked;
    return (navigator.language || '').startsWith('zh') ? 'zh' : 'en';
  }

  /* The app core picks its language once, at start (as the desktop's --lang):
   * the button reloads the page in the other one; lesson progress is kept. */
  function languageButton(lang) {
    const b = document.getElementById('lang');
    const other = lang === 'zh' ? 'en' : 'zh';
    b.textContent = other === 'zh' ? '中文' : 'English';
    b.title = other === 'zh' ? '切换到中文' : 'Switch to English';
    b.hidden = false;
    b.addEventListener('click', () => {
      try { localStorage.setItem(LANG_KEY, other); } catch (e) { /* storage off: the address carries it */ }
      const q = new URLSearchParams(location.search);
      q.set('lang', other);
      location.search = q.toString();
    });
  }

  /* ---- which build: the threaded one when the page is (or, through sw.js, can be) cross-origin isolated */

  const REGISTERED_KEY = 'attnlab.isolating'; /* this tab reloaded once for sw.js already */

  /* 'threads', 'single', or null: the page reloads to be isolated */
  async function chooseBuild() {
    const asked = new URLSearchParams(location.search).get('threads');
    let reloaded = null;
    try { reloaded = sessionStorage.getItem(REGISTERED_KEY); sessionStorage.removeItem(REGISTERED_KEY); } catch (e) { /* off */ }
    if (window.crossOriginIsolated) {
      /* a new build is a new sw.js: it takes over in the background, for the next load */
      if ('serviceWorker' in navigator)
        navigator.serviceWorker.getRegistration().then((r) => r && r.update()).catch(() => { /* offline */ });
      return asked === '0' ? 'single' : 'threads';
    }
    if (asked === '0' || !('serviceWorker' in navigator) || reloaded) return 'single';
    try {
      await navigator.serviceWorker.register('sw.js');
      if (navigator.serviceWorker.controller) return 'single'; /* it answers, and still no isolation: the host's own headers */
      await navigator.serviceWorker.ready;
      sessionStorage.setItem(REGISTERED_KEY, '1');
      /* (a reload() here can keep a hard reload's bypass of the worker; a link's #lesson=… would make
       * replace() a jump within the page, not a load: its parameters go into the query) */
      const hash = location.hash.slice(1);
      location.replace(location.href.replace(/#.*/, '') + (hash ? (location.search ? '&' : '?') + hash : ''));
      return null;
    } catch (e) {
      return 'single';
    }
  }

  function loadScript(src) {
    return new Promise((resolve, reject) => {
      const el = document.createElement('script');
      el.src = src;
      el.onload = resolve;
      el.onerror = () => reject(new Error(src + ' did not load'));
      document.body.appendChild(el);
    });
  }

  /* ---- the loading view (index.html's #loading): the module and its data downloading, before
   * the first frame; in the language the app core will speak */

  const loading = { done: 0, total: 0 };

  function loadingShow() {
    document.getElementById('loading-what').textContent = note('loading');
    if (!loading.total) return;
    const part = Math.min(1, loading.done / loading.total);
    document.getElementById('loading-how').textContent =
      note('downloading').replace('%s', mb(Math.min(loading.done, loading.total))).replace('%s', mb(loading.total));
    document.getElementById('loading-bar').style.width = Math.max(4, Math.round(100 * part)) + '%';
    document.getElementById('loading').setAttribute('aria-valuenow', String(Math.round(100 * part)));
  }

  /* url's bytes, counted into the loading view as they come (a compressed answer's length is not
   * its bytes': counted when it has come) */
  async function fetchBytes(url) {
    const r = await fetch(url);
    if (!r.ok) throw new Error(url + ': HTTP ' + r.status);
    const size = r.headers.get('content-encoding') ? 0 : Number(r.headers.get('content-length')) || 0;
    loading.total += size;
    const parts = [], reader = r.body.getReader();
    let got = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      parts.push(value);
      got += value.length;
      loading.done += value.length;
      loadingShow();
    }
    if (!size) loading.total += got;
    const out = new Uint8Array(got);
    let at = 0;
    for (const p of parts) { out.set(p, at); at += p.length; }
    return out.buffer;
  }

  /* the module's factory, of the build chosen, with its wasm and its data (both builds pack the
   * same data, src/platform/web/CMakeLists.txt), downloaded here to show how far they are */
  async function loadModule(build) {
    stats.build = build;
    const name = build === 'threads' ? 'attnlab-mt' : 'attnlab';
    const [, wasm, data] = await Promise.all([loadScript(name + '.js'), fetchBytes(name + '.wasm'), fetchBytes('attnlab.data')]);
    return window.attnlab({ attnTextWidth: textWidth, attnLineHeight: lineHeight, attnModelWant: modelWant,
                            attnModelBytes: modelBytes, attnModelWhy: modelWhy, wasmBinary: wasm,
                            getPreloadedPackage: () => data,
                            locateFile: (f) => (f === 'attnlab-mt.data' ? 'attnlab.data' : f) });
  }

  /* text is measured from the first frame on: the page's fonts first (a missing one: the browser's) */
  function loadFonts() {
    return Promise.all([document.fonts.load('16px "DejaVu Sans"'), document.fonts.load('bold 16px "DejaVu Sans"'),
                        document.fonts.load('16px "WenQuanYi Micro Hei"', '\u4e2d')])
      .catch(() => null);
  }

  loadingShow();
  /* nothing more is fetched before the page knows it stays (not reloading for sw.js) */
  chooseBuild()
    .then((build) => (build ? Promise.all([loadModule(build), loadFonts()]) : new Promise(() => {})))
    .then(([mod]) => {
      M = mod;
      window.attnlabModule = mod; /* for the test (tests/web): web_bench */
      loadProgress();
      const [w, h] = fit();
      const lang = language();
      const rc = withString(lang, (p) => M._web_init(w, h, dpr, p));
      if (rc) { document.getElementById('loading').hidden = true; showNote(note('noStart')); return; }
      showNote('');
      barNote(word('bar'));
      /* which build runs: said quietly, as the bar's tooltip */
      document.getElementById('bar').title = word(stats.build === 'threads' ? 'threads' : 'single');
      languageButton(lang);
      modelPicker();
      copyButton();
      openLinked();
      canvas.focus();
      requestAnimationFrame(tick);
    })
    .catch((e) => { document.getElementById('loading').hidden = true; showNote(note('noLoad') + e); });
})();
