// ort_run.js: runs a model with onnxruntime-node (CPU, 1 thread, graph optimizations off, as
// ../shared's reference outputs were made) on a raw float32 input and writes each output as
// raw float32 plus a JSON index {name: shape}. usage: node ort_run.js MODEL IN.f32 NAME DIMS OUTDIR
const ort = require('onnxruntime-node');
const fs = require('fs');
(async () => {
  const [model, input, name, dims, outdir] = process.argv.slice(2);
  const shape = dims.split('x').map(Number);
  const buf = fs.readFileSync(input);
  const data = new Float32Array(buf.buffer, buf.byteOffset, buf.length / 4);
  const s = await ort.InferenceSession.create(model,
    {graphOptimizationLevel: 'disabled', intraOpNumThreads: 1, executionProviders: ['cpu']});
  const res = await s.run({[name]: new ort.Tensor('float32', data, shape)});
  const index = {};
  for (const k of s.outputNames) {
    const f = k.replace(/[^A-Za-z0-9_.-]/g, '_') + '.f32';
    fs.writeFileSync(`${outdir}/${f}`, Buffer.from(res[k].data.buffer));
    index[k] = {file: f, dims: res[k].dims};
  }
  fs.writeFileSync(`${outdir}/ort_outputs.json`, JSON.stringify(index));
})().catch((e) => { console.error(`ort_run.js: ${e.message}`); process.exit(3); });
