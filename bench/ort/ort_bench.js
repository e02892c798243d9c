// ort_bench.js: onnxruntime-node side of the ctpu inference benchmark. Reads the input
// TensorProto .pb files (protobufjs + Debian's /usr/include/onnx/onnx.proto), then times
// session.run (CPU, graphOptimizationLevel 'all', intraOpNumThreads = each N given):
// warm-up runs for at least 300 ms after the session is created (as bench_infer.c), then RUNS
// timed runs; prints one line "THREADS MEDIAN_MS" per thread count.
// usage: node ort_bench.js MODEL.onnx RUNS THREADS[,THREADS...] INPUT.pb...
const ort = require('onnxruntime-node');
const protobuf = require('protobufjs');
const fs = require('fs');

const ONNX_PROTO = '/usr/include/onnx/onnx.proto';
// TensorProto.DataType → [typed array, ort type name]
const TYPES = {1: [Float32Array, 'float32'], 6: [Int32Array, 'int32'], 7: [BigInt64Array, 'int64'],
               11: [Float64Array, 'float64'], 2: [Uint8Array, 'uint8'], 3: [Int8Array, 'int8']};

function readTensor(TensorProto, path) {
  const tp = TensorProto.decode(fs.readFileSync(path));
  const t = TYPES[tp.dataType];
  if (!t) throw new Error(`${path}: unsupported tensor type ${tp.dataType}`);
  const dims = tp.dims.map(Number);
  let data;
  if (tp.rawData && tp.rawData.length) {
    const raw = Buffer.from(tp.rawData);
    const copy = new Uint8Array(raw.length);
    copy.set(raw);
    data = new t[0](copy.buffer);
  } else {
    const src = tp.dataType === 1 ? tp.floatData : tp.dataType === 7 ? tp.int64Data.map(BigInt)
      : tp.dataType === 11 ? tp.doubleData : tp.int32Data;
    data = t[0].from(src);
  }
  return {name: tp.name, tensor: new ort.Tensor(t[1], data, dims)};
}

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
  const root = protobuf.loadSync(ONNX_PROTO);
  const TensorProto = root.lookupType('onnx.TensorProto');
  const probe = await ort.InferenceSession.create(model);
  const feeds = {};
  inputs.forEach((p, i) => { feeds[probe.inputNames[i]] = readTensor(TensorProto, p).tensor; });
  for (const th of threadsArg.split(',').map(Number))
    console.log(`${th} ${(await timeRuns(model, feeds, th, Number(runsArg))).toFixed(3)}`);
})().catch((e) => { console.error(`ort_bench.js: ${e.message}`); process.exit(3); });
