// ort_run.js: runs an ONNX model on onnxruntime-node (CPU, graph optimizations disabled unless
// ORT_OPT_LEVEL says basic / extended / all, one thread) and writes every output as an ONNX TensorProto OUTDIR/<name>.pb plus OUTDIR/<name>.pb.max
// (max |value|) for fuzz/run_case.sh. Float32 tensors only; a minimal protobuf codec.
// usage: NODE_PATH=.../node_modules node ort_run.js MODEL.onnx OUTDIR INPUT.pb...
// As a module it exports readTensor (bench/ort/ort_bench.js reads its inputs with it).
'use strict';
const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');

function varint(buf, pos) {
  let v = 0n, shift = 0n;
  for (;;) {
    const b = buf[pos++];
    v |= BigInt(b & 0x7f) << shift;
    if (!(b & 0x80)) return [v, pos];
    shift += 7n;
  }
}

function readTensor(file) {
  const buf = fs.readFileSync(file);
  const t = { dims: [], name: '', type: 0, raw: null, floats: [] };
  let pos = 0;
  while (pos < buf.length) {
    let key;
    [key, pos] = varint(buf, pos);
    const field = Number(key >> 3n), wire = Number(key & 7n);
    if (wire === 0) {
      let v;
      [v, pos] = varint(buf, pos);
      if (field === 1) t.dims.push(Number(BigInt.asIntN(64, v)));
      if (field === 2) t.type = Number(v);
    } else if (wire === 2) {
      let len;
      [len, pos] = varint(buf, pos);
      const body = buf.subarray(pos, pos + Number(len));
      pos += Number(len);
      if (field === 1) for (let p = 0; p < body.length;) { let v; [v, p] = varint(body, p); t.dims.push(Number(v)); }
      if (field === 8) t.name = body.toString('utf8');
      if (field === 9) t.raw = Buffer.from(body);
      if (field === 4) for (let p = 0; p + 4 <= body.length; p += 4) t.floats.push(body.readFloatLE(p));
    } else if (wire === 5) {
      if (field === 4) t.floats.push(buf.readFloatLE(pos));
      pos += 4;
    } else if (wire === 1) {
      pos += 8;
    } else {
      throw new Error(file + ': unsupported protobuf wire type ' + wire);
    }
  }
  if (t.type !== 1) throw new Error(file + ': not a float32 tensor');
  const n = t.dims.reduce((a, b) => a * b, 1);
  const data = new Float32Array(n);
  if (t.raw) for (let i = 0; i < n; i++) data[i] = t.raw.readFloatLE(4 * i);
  else data.set(t.floats.slice(0, n));
  return { name: t.name, tensor: new ort.Tensor('float32', data, t.dims) };
}

function enc(v) {
  const out = [];
  let x = BigInt.asUintN(64, BigInt(v));
  do {
    let b = Number(x & 0x7fn);
    x >>= 7n;
    if (x) b |= 0x80;
    out.push(b);
  } while (x);
  return Buffer.from(out);
}

function writeTensor(file, name, t) {
  const parts = [];
  for (const d of t.dims) parts.push(enc(1 << 3), enc(d));
  parts.push(enc(2 << 3), enc(1));
  const nm = Buffer.from(name, 'utf8');
  parts.push(enc((8 << 3) | 2), enc(nm.length), nm);
  const raw = Buffer.from(Float32Array.from(t.data).buffer);
  parts.push(enc((9 << 3) | 2), enc(raw.length), raw);
  fs.writeFileSync(file, Buffer.concat(parts));
  let m = 0;
  for (const v of t.data) m = Math.max(m, Math.abs(v));
  fs.writeFileSync(file + '.max', String(m) + '\n');
}

async function main() {
  const [model, outdir, ...inputs] = process.argv.slice(2);
  const sess = await ort.InferenceSession.create(model, {
    graphOptimizationLevel: process.env.ORT_OPT_LEVEL || 'disabled', intraOpNumThreads: 1, interOpNumThreads: 1 });
  const feeds = {};
  inputs.forEach((f, i) => {
    const t = readTensor(f);
    feeds[sess.inputNames.includes(t.name) ? t.name : sess.inputNames[i]] = t.tensor;
  });
  const res = await sess.run(feeds);
  fs.mkdirSync(outdir, { recursive: true });
  for (const name of sess.outputNames) writeTensor(path.join(outdir, name + '.pb'), name, res[name]);
}

module.exports = { readTensor };
if (require.main === module)
  main().catch((e) => { console.error('error: ' + (e && e.message ? e.message : e)); process.exit(1); });
