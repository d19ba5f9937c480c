// ONNX Runtime's half of bench/onnx/pairs: one session kept open (as
// ../../../../shared/bench/onnx/ort_run.js `bench` makes it: intraOpNumThreads,
// sequential, graph optimization "all"), fed the inputs of SPEC.json (a list of
// {name, type, dims, file}: raw little-endian arrays); then, for each line N
// on standard input, N runs each timed alone, their milliseconds printed on one
// line as JSON. "ready" once the session is open.
//
// usage: ORT_NODE_MODULE=... node ort_worker.js MODEL THREADS SPEC.json
'use strict';
const fs = require('fs');
const readline = require('readline');
const ort = require(process.env.ORT_NODE_MODULE || 'onnxruntime-node');

const arrays = {float32: Float32Array, float64: Float64Array, int8: Int8Array, uint8: Uint8Array,
  int16: Int16Array, uint16: Uint16Array, int32: Int32Array, uint32: Uint32Array, int64: BigInt64Array,
  uint64: BigUint64Array, bool: Uint8Array, float16: Uint16Array};

(async () => {
  const [model, threads, specFile] = process.argv.slice(2);
  const session = await ort.InferenceSession.create(model, {intraOpNumThreads: +threads, interOpNumThreads: 1,
    executionMode: 'sequential', graphOptimizationLevel: 'all'});
  const feeds = {};
  for (const s of JSON.parse(fs.readFileSync(specFile))) {
    const b = fs.readFileSync(s.file);
    const A = arrays[s.type];
    const copy = new Uint8Array(b); // aligned for A
    feeds[s.name] = new ort.Tensor(s.type, new A(copy.buffer, 0, copy.byteLength / A.BYTES_PER_ELEMENT), s.dims);
  }
  console.log('ready');
  for await (const line of readline.createInterface({input: process.stdin})) {
    const ms = [];
    for (let i = 0; i < +line; i++) {
      const t = process.hrtime.bigint();
      await session.run(feeds);
      ms.push(Number(process.hrtime.bigint() - t) / 1e6);
    }
    console.log(JSON.stringify(ms));
  }
})();
