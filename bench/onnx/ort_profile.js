// Runs one ONNX model under ONNX Runtime's profiler (npm onnxruntime-node):
// a session as ../../../shared/bench/onnx/ort_run.js `bench` makes it
// (intraOpNumThreads, sequential, graph optimization "all"), the inputs a
// JSON list of {name, type, dims, file} (raw little-endian arrays), REPS
// runs; the profile (Chrome trace JSON) goes to PREFIX_<date>.json.
//
// usage: ORT_NODE_MODULE=... node ort_profile.js MODEL THREADS REPS INPUTS.json PREFIX
const ort = require(process.env.ORT_NODE_MODULE);
const fs = require('fs');
const arrays = {float32: Float32Array, float64: Float64Array, int64: BigInt64Array, int32: Int32Array,
  float16: Uint16Array, int8: Int8Array, uint8: Uint8Array, bool: Uint8Array};
(async () => {
  const [model, threads, reps, specFile, prefix] = process.argv.slice(2);
  const session = await ort.InferenceSession.create(model, {intraOpNumThreads: +threads, interOpNumThreads: 1,
    executionMode: 'sequential', graphOptimizationLevel: 'all', enableProfiling: true, profileFilePrefix: prefix});
  const feeds = {};
  for (const s of JSON.parse(fs.readFileSync(specFile))) {
    const b = fs.readFileSync(s.file);
    const A = arrays[s.type];
    feeds[s.name] = new ort.Tensor(s.type, new A(b.buffer, b.byteOffset, b.byteLength / A.BYTES_PER_ELEMENT), s.dims);
  }
  for (let i = 0; i < +reps; i++) await session.run(feeds);
  session.endProfiling();
})();
