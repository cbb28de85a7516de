#!/usr/bin/python3
"""Time attnlab's traced forward pass against the same computation in PyTorch.

The PyTorch side does exactly what attnlab does and, like attnlab's trace,
keeps every intermediate tensor materialised as its own contiguous tensor:

    q, k, v              = x @ w_q, x @ w_k, x @ w_v
    q_heads              (b,h,s,k)  contiguous
    k_heads, v_heads     (b,g,s,k)  contiguous
    k_expanded, v_expanded (b,h,s,k) contiguous, query head j uses kv head j // (h/g)
    scores               = q_heads @ k_expanded^T / sqrt(k)   (b,h,s,s)
    mask                 (b,1,s,s) additive causal mask: 0 on/below diagonal, -inf above
    masked_scores        = scores + mask
    weights              = softmax(masked_scores, -1)
    context              = weights @ v_expanded               (b,h,s,k)
    merged               (b,s,d) contiguous
    out                  = merged @ w_o

float32, CPU, torch.no_grad(), causal mask, no RoPE, no dropout.  The time of
one forward includes allocating every intermediate; it is warmed up once and
the median of --repeat runs is reported.  Both sides are scored with the same
FLOP count (see flop_count()).

Usage (from the repository root):
    /usr/bin/python3 bench/vs_torch.py [--attnlab build/attnlab] [--seq 1024]
        [--d-model 1024] [--heads 16] [--kv-heads 4] [--batch 1] [--repeat 7]
        [--threads N] [--torch-only]

Besides the three summary lines (torch / attnlab / ratio) it prints each
side's min and max and how much CPU other processes used while it ran: on a
shared machine a busy neighbour makes the figures meaningless.

Exit status: 0 on success, 1 if attnlab is missing or fails (the torch
figures are still printed), 2 on bad arguments.
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import time

BENCH_RE = re.compile(r"bench: ([0-9.]+) ms")
GFLOPS_RE = re.compile(r"([0-9.]+) GFLOP/s")
MINMAX_RE = re.compile(r"min ([0-9.]+) ms, max ([0-9.]+) ms")
REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def parse_args():
    p = argparse.ArgumentParser(
        description="Compare attnlab's traced forward with the same computation in PyTorch.")
    p.add_argument("--attnlab", default="build/attnlab",
                   help="path to the attnlab binary (default: build/attnlab, relative to the "
                        "current directory, else to the repository root)")
    p.add_argument("--seq", type=int, default=1024, help="sequence length s")
    p.add_argument("--d-model", type=int, default=1024, help="model width d")
    p.add_argument("--heads", type=int, default=16, help="query heads h")
    p.add_argument("--kv-heads", type=int, default=4, help="key/value heads g")
    p.add_argument("--batch", type=int, default=1, help="batch size b")
    p.add_argument("--repeat", type=int, default=7, help="timed runs (median reported)")
    p.add_argument("--threads", type=int, default=None,
                   help="threads for torch (default: os.cpu_count()); also exported as "
                        "OMP_NUM_THREADS/OPENBLAS_NUM_THREADS to both torch and attnlab")
    p.add_argument("--torch-only", action="store_true",
                   help="only time PyTorch and print the torch line")
    a = p.parse_args()
    for name in ("seq", "d_model", "heads", "kv_heads", "batch", "repeat"):
        if getattr(a, name) < 1:
            p.error("--%s must be >= 1" % name.replace("_", "-"))
    if a.threads is not None and a.threads < 1:
        p.error("--threads must be >= 1")
    if a.d_model % a.heads:
        p.error("--d-model (%d) must be divisible by --heads (%d)" % (a.d_model, a.heads))
    if a.heads % a.kv_heads:
        p.error("--heads (%d) must be divisible by --kv-heads (%d)" % (a.heads, a.kv_heads))
    return a


def flop_count(b, s, d, h, g):
    k = d // h
    return (2 * b * s * d * d              # q projection
            + 2 * 2 * b * s * d * (g * k)  # k and v projections
            + 2 * b * h * s * s * k        # scores
            + 2 * b * h * s * s * k        # context
            + 2 * b * s * d * d)           # output projection


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown"


class OtherLoad:
    """Measures how much CPU other processes used while a phase ran.

    Busy time of the whole machine (/proc/stat) minus this process's and its
    children's CPU time, as a percentage of all CPUs over the wall time.
    """

    def __init__(self):
        self.start = self._sample()

    @staticmethod
    def _sample():
        try:
            with open("/proc/stat") as f:
                v = [int(x) for x in f.readline().split()[1:]]
            busy = (sum(v[:8]) - v[3] - v[4]) / float(os.sysconf("SC_CLK_TCK"))
        except (OSError, ValueError, IndexError):
            return None
        t = os.times()
        own = t.user + t.system + t.children_user + t.children_system
        return busy, own, time.monotonic()

    def percent(self):
        end = self._sample()
        if self.start is None or end is None:
            return None
        wall = end[2] - self.start[2]
        if wall <= 0:
            return None
        other = (end[0] - self.start[0]) - (end[1] - self.start[1])
        return max(0.0, 100.0 * other / (wall * (os.cpu_count() or 1)))


def load_note(pct):
    if pct is None:
        return ""
    return " [other processes used %.0f%% of the CPUs meanwhile%s]" % (
        pct, "; WARNING: timing unreliable" if pct > 10 else "")


def resolve_attnlab(path):
    if os.path.isabs(path) or os.path.exists(path):
        return path
    alt = os.path.join(REPO_ROOT, path)
    return alt if os.path.exists(alt) else path


def run_attnlab(a, env):
    """Run `attnlab bench`; return a dict with "ms" (median), "gflops" and
    "min"/"max" (None where attnlab did not print them), or with "error"."""
    exe = resolve_attnlab(a.attnlab)
    if not os.path.isfile(exe):
        return {"error": "binary not found: %s" % exe}
    if not os.access(exe, os.X_OK):
        return {"error": "binary not executable: %s" % exe}
    cmd = [exe, "bench", "--seq", str(a.seq), "--d-model", str(a.d_model),
           "--heads", str(a.heads), "--kv-heads", str(a.kv_heads),
           "--batch", str(a.batch), "--repeat", str(a.repeat)]
    print("running: %s" % " ".join(cmd), file=sys.stderr, flush=True)
    try:
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           universal_newlines=True, env=env, timeout=3600)
    except subprocess.TimeoutExpired:
        return {"error": "timed out after 3600 s: %s" % " ".join(cmd)}
    except OSError as e:
        return {"error": "could not run %s: %s" % (exe, e)}
    lines = [l for l in r.stdout.splitlines() if l.strip()]
    last = lines[-1] if lines else ""
    if r.returncode != 0:
        why = (r.stderr.strip().splitlines() or [last])[-1]
        return {"error": "exited with status %d%s" % (r.returncode, ": " + why if why else "")}
    m = BENCH_RE.search(last)
    if not m:
        return {"error": "could not parse its last line: %r" % last}
    g = GFLOPS_RE.search(last[m.end():])
    res = {"ms": float(m.group(1)), "gflops": float(g.group(1)) if g else None,
           "min": None, "max": None}
    for line in lines:
        mm = MINMAX_RE.search(line)
        if mm:
            res["min"], res["max"] = float(mm.group(1)), float(mm.group(2))
    return res


def make_forward(a, torch):
    """Return (forward, inputs); forward() returns every intermediate."""
    import math
    b, s, d, h, g = a.batch, a.seq, a.d_model, a.heads, a.kv_heads
    k = d // h
    rep = h // g
    scale = 1.0 / math.sqrt(k)
    f32 = torch.float32

    gen = torch.Generator().manual_seed(1234)
    x = torch.randn(b, s, d, generator=gen, dtype=f32)
    w_q = torch.randn(d, d, generator=gen, dtype=f32) / math.sqrt(d)
    w_k = torch.randn(d, g * k, generator=gen, dtype=f32) / math.sqrt(d)
    w_v = torch.randn(d, g * k, generator=gen, dtype=f32) / math.sqrt(d)
    w_o = torch.randn(d, d, generator=gen, dtype=f32) / math.sqrt(d)

    def forward():
        q = torch.matmul(x, w_q)                                  # (b,s,d)
        kk = torch.matmul(x, w_k)                                 # (b,s,g*k)
        v = torch.matmul(x, w_v)                                  # (b,s,g*k)
        q_heads = q.view(b, s, h, k).transpose(1, 2).contiguous()     # (b,h,s,k)
        k_heads = kk.view(b, s, g, k).transpose(1, 2).contiguous()    # (b,g,s,k)
        v_heads = v.view(b, s, g, k).transpose(1, 2).contiguous()     # (b,g,s,k)
        k_expanded = k_heads.repeat_interleave(rep, dim=1)        # (b,h,s,k)
        v_expanded = v_heads.repeat_interleave(rep, dim=1)        # (b,h,s,k)
        # scores = q_heads @ k_expanded^T / sqrt(k), scale folded into the
        # GEMM (alpha) so scores is the only tensor that product creates.
        scores = torch.empty(b * h, s, s, dtype=f32)
        torch.baddbmm(scores, q_heads.view(b * h, s, k),
                      k_expanded.view(b * h, s, k).transpose(1, 2),
                      beta=0.0, alpha=scale, out=scores)
        scores = scores.view(b, h, s, s)
        mask = torch.full((b, 1, s, s), float("-inf"), dtype=f32).triu_(1)  # (b,1,s,s)
        masked_scores = scores + mask                             # (b,h,s,s)
        weights = torch.softmax(masked_scores, dim=-1)            # (b,h,s,s)
        context = torch.matmul(weights, v_expanded)               # (b,h,s,k)
        merged = context.transpose(1, 2).contiguous().view(b, s, d)   # (b,s,d)
        out = torch.matmul(merged, w_o)                           # (b,s,d)
        return (q, kk, v, q_heads, k_heads, v_heads, k_expanded, v_expanded,
                scores, mask, masked_scores, weights, context, merged, out)

    return forward, (x, w_q, w_k, w_v, w_o)


def time_torch(a, torch):
    """Return the list of per-forward times in ms (after one warm-up)."""
    f32 = torch.float32
    forward, _ = make_forward(a, torch)
    times = []
    with torch.no_grad():
        trace = forward()                       # warm-up
        for t in trace:
            assert t.is_contiguous() and t.dtype == f32
        if not torch.isfinite(trace[-1]).all():
            raise RuntimeError("torch forward produced non-finite output")
        del trace
        for _ in range(a.repeat):
            t0 = time.perf_counter()
            trace = forward()
            t1 = time.perf_counter()
            times.append((t1 - t0) * 1e3)
            del trace                           # freeing is not timed
    return times


def main():
    a = parse_args()

    env = os.environ.copy()
    if a.threads is not None:
        # OpenBLAS (torch's BLAS on Debian) and OpenMP read these when loaded,
        # so set them before importing torch; attnlab gets the same.
        for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
            os.environ[var] = str(a.threads)
            env[var] = str(a.threads)

    # Run attnlab first, before torch is even imported, so torch's idle
    # worker threads cannot compete with it.
    al = None
    if not a.torch_only:
        meter = OtherLoad()
        al = run_attnlab(a, env)
        al["load"] = meter.percent()

    import torch
    threads = a.threads if a.threads is not None else (os.cpu_count() or 1)
    torch.set_num_threads(threads)

    if not a.torch_only:
        print("torch %s, %d threads, CPU: %s (%d logical CPUs)"
              % (torch.__version__, torch.get_num_threads(), cpu_model(), os.cpu_count() or 0))
        print("config: batch %d, seq %d, d_model %d, heads %d, kv_heads %d (head dim %d), "
              "causal, float32" % (a.batch, a.seq, a.d_model, a.heads, a.kv_heads,
                                   a.d_model // a.heads))
        sys.stdout.flush()

    flops = flop_count(a.batch, a.seq, a.d_model, a.heads, a.kv_heads)

    def gflops(ms):
        return flops / (ms * 1e-3) / 1e9

    meter = OtherLoad()
    times = time_torch(a, torch)
    torch_load = meter.percent()
    torch_ms = statistics.median(times)
    print("torch: %.3f ms per forward (median of %d), %.2f GFLOP/s"
          % (torch_ms, a.repeat, gflops(torch_ms)))
    if a.torch_only:
        if torch_load is not None and torch_load > 10:
            print("warning:%s" % load_note(torch_load), file=sys.stderr)
        return 0
    print("  torch: min %.3f ms, max %.3f ms%s" % (min(times), max(times), load_note(torch_load)))

    if "error" in al:
        print("attnlab: FAILED (%s); no comparison" % al["error"])
        print("error: attnlab %s" % al["error"], file=sys.stderr)
        return 1
    print("attnlab: %.3f ms per traced forward (median of %d), %.2f GFLOP/s"
          % (al["ms"], a.repeat, gflops(al["ms"])))
    spread = ("min %.3f ms, max %.3f ms" % (al["min"], al["max"])
              if al["min"] is not None else "min/max not reported")
    print("  attnlab: %s%s" % (spread, load_note(al["load"])))
    print("ratio attnlab/torch: %.3f" % (al["ms"] / torch_ms))
    ours = gflops(al["ms"])
    if al["gflops"] is not None and abs(al["gflops"] - ours) > 0.02 * ours:
        print("note: attnlab itself reports %.2f GFLOP/s; its FLOP count differs from this "
              "script's" % al["gflops"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
