// ort_bench.js: onnxruntime-node side of the ctpu inference benchmark. Reads the input
// TensorProto .pb files (float32; fuzz/ort_run.js's reader), then times
// session.run (CPU, graphOptimizationLevel 'all', intraOpNumThreads = each N given):
// warm-up runs for at least 300 ms after the session is created (as bench_infer.c), then RUNS
// timed runs; prints one line "THREADS MEDIAN_MS" per thread count.
// usage: node ort_bench.js MODEL.onnx RUNS THREADS[,THREADS...] INPUT.pb...
const ort = require('onnxruntime-node');
const { readTensor } = require('../../fuzz/ort_run.js'); // float32 TensorProto .pb → ort.Tensor

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

async function timeRuns(model, feeds, threads, runs) {
  const s = await ort.InferenceSession.create(model, {graphOptimizationLevel: 'all',
    intraOpNumThreads: threads, interOpNumThreads: 1, executionMode: 'sequential', executionProviders: ['cpu']});
  const t0w = process.hrtime.bigint();
  do await s.run(feeds); // warm-up
  while (Number(process.hrtime.bigint() - t0w) / 1e6 < 300);
  const ms = [];
  for (let i = 0; i < runs; i++) {
    const t0 = process.hrtime.bigint();
    await s.run(feeds);
    ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  return median(ms);
}

(async () => {
  const [model, runsArg, threadsArg, ...inputs] = process.argv.slice(2);
  if (!model || !inputs.length) throw new Error('usage: node ort_bench.js MODEL.onnx RUNS THREADS INPUT.pb...');
  const probe = await ort.InferenceSession.create(model);
  const feeds = {};
  inputs.forEach((p, i) => { feeds[probe.inputNames[i]] = readTensor(p).tensor; });
  for (const th of threadsArg.split(',').map(Number))
    console.log(`${th} ${(await timeRuns(model, feeds, th, Number(runsArg))).toFixed(3)}`);
})().catch((e) => { console.error(`ort_bench.js: ${e.message}`); process.exit(3); });
