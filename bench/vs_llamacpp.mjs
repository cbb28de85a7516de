// vs_llamacpp.mjs — llama.cpp's side of bench/vs_llamacpp.py, through the
// prebuilt library of the npm package node-llama-cpp (no llama.cpp binaries
// ship in it: the library is driven through node-llama-cpp's API).
//
//   node bench/vs_llamacpp.mjs JOB.json
//
// JOB: {"modules": node_modules folder, "gguf": file, "threads": n, "ids": token ids,
//       "logits": n (0: none), "vocab": size, "prefill": [n, ...], "reps": r, "decode": steps,
//       "exact": false}
// Prints one line of JSON: {"logits": [...] | null, "prefill": {"n": [ms, ...]},
// "decode": [ms, ...], "backend": ...}. Every evaluation starts from an empty
// sequence; decoding is greedy, one token per call, after the longest prefill.
import fs from "node:fs";
import path from "node:path";
import {pathToFileURL} from "node:url";

const job = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
const entry = path.join(job.modules, "node-llama-cpp", "dist", "index.js");
const {getLlama, LlamaLogLevel} = await import(pathToFileURL(entry).href);

const llama = await getLlama({gpu: false, build: "never", usePrebuiltBinaries: true, skipDownload: true,
                              progressLogs: false, logLevel: LlamaLogLevel.error, maxThreads: job.threads});
const model = await llama.loadModel({modelPath: job.gguf, gpuLayers: 0});
const longest = Math.max(job.logits, ...job.prefill);
// job.exact: keys and values cached in float32, not llama.cpp's default F16, and no
// flash attention (on the CPU it rounds through F16 even then)
const kv = job.exact ? {experimentalKvCacheKeyType: "F32", experimentalKvCacheValueType: "F32", flashAttention: false}
                     : {};
const context = await model.createContext({contextSize: longest + job.decode + 8, batchSize: longest, sequences: 1,
                                           threads: {ideal: job.threads, min: job.threads}, ...kv});
const seq = context.getSequence();
const greedy = {generateNext: {token: true, options: {temperature: 0}}};

// the tokens ids[0..n) into an empty sequence; the next token chosen greedily
async function prefill(n) {
    await seq.clearHistory();
    const input = job.ids.slice(0, n - 1);
    input.push([job.ids[n - 1], greedy]);
    const out = await seq.controlledEvaluate(input);
    return out[n - 1].next.token;
}

const result = {logits: null, prefill: {}, decode: [], build: llama.buildType, release: llama.llamaCppRelease.release,
                system: llama.systemInfo};
if (job.logits > 0) {
    await seq.clearHistory();
    const input = job.ids.slice(0, job.logits - 1);
    input.push([job.ids[job.logits - 1], {generateNext: {logits: true}}]);
    const out = await seq.controlledEvaluate(input);
    const row = new Array(job.vocab).fill(null);
    for (const [tok, v] of out[job.logits - 1].next.logits) row[tok] = v;
    result.logits = row;
}
for (const n of job.prefill) {
    result.prefill[n] = [];
    if (job.reps > 0) await prefill(n); // warm-up: the first pass faults in the weights and buffers
    for (let r = 0; r < job.reps; r++) {
        const t0 = performance.now();
        await prefill(n);
        result.prefill[n].push(performance.now() - t0);
    }
}
if (job.decode > 0) {
    let tok = await prefill(Math.max(...job.prefill));
    for (let i = 0; i < job.decode; i++) {
        const t0 = performance.now();
        const out = await seq.controlledEvaluate([[tok, greedy]]);
        result.decode.push(performance.now() - t0);
        tok = out[0].next.token;
    }
}
process.stdout.write(JSON.stringify(result) + "\n");
await context.dispose();
await model.dispose();
await llama.dispose();
