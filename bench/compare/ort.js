// ONNX Runtime (onnxruntime-node, CPU EP) on the models peers.py exported.
// Usage: node ort.js DIR  (DIR holds manifest.json, NAME.onnx, NAME.inN.bin)
// 2 intra-op threads, idle workers parked (session.intra_op.allow_spinning=0),
// the same inputs as numpy/PyTorch, warm-up runs, then the median of individually
// timed calls. Checks each output's sum against numpy's; prints {workload: ms}.
const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');

const options = {
  executionProviders: ['cpu'],
  intraOpNumThreads: 2,
  interOpNumThreads: 1,
  executionMode: 'sequential',
  graphOptimizationLevel: 'all',
  extra: { session: { intra_op: { allow_spinning: '0' }, inter_op: { allow_spinning: '0' } } },
};

// Element types an input may have (manifest "types"; float32 when absent).
const arrays = { float32: Float32Array, int8: Int8Array, uint8: Uint8Array };

function readInput(file, type) {
  const b = fs.readFileSync(file);
  return new arrays[type](b.buffer.slice(b.byteOffset, b.byteOffset + b.length));
}

async function main() {
  const dir = process.argv[2];
  const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json')));
  const results = {};
  for (const [name, m] of Object.entries(manifest)) {
    try {
      const session = await ort.InferenceSession.create(path.join(dir, name + '.onnx'), options);
      const feeds = {};
      m.inputs.forEach((f, i) => {
        const type = (m.types || [])[i] || 'float32';
        feeds[session.inputNames[i]] = new ort.Tensor(type, readInput(path.join(dir, f), type), m.shapes[i]);
      });
      let out;
      for (let i = 0; i < m.warmup; i++) out = await session.run(feeds);
      const times = [];
      for (let i = 0; i < m.repeat; i++) {
        const t0 = process.hrtime.bigint();
        out = await session.run(feeds);
        times.push(Number(process.hrtime.bigint() - t0) / 1e6);
      }
      times.sort((a, b) => a - b);
      let sum = 0;
      for (const v of out[session.outputNames[0]].data) sum += v;
      if (!(Math.abs(sum - m.sum) <= 1e-4 * m.abssum + 1e-3)) throw new Error(`output sum ${sum}, numpy ${m.sum}`);
      results[name] = times[times.length >> 1];
      console.error(name, results[name]);
      await session.release();
    } catch (e) {
      console.error(`${name}: ${e.message}`);
      results[name] = null;
    }
  }
  console.log(JSON.stringify(results));
}

main();
