#!/usr/bin/env node
// Saves ONNX Runtime's optimized form of a model, as a user does with the session option
// optimizedModelFilePath: node optimize.js IN.onnx OUT.onnx [basic|extended|all]
// (ORT_NODE_MODULE: the onnxruntime-node package; "extended" writes com.microsoft contrib ops
// without the CPU provider's NCHWc layouts).
'use strict';
const ort = require(process.env.ORT_NODE_MODULE || 'onnxruntime-node');

(async () => {
  const [src, dst, level] = process.argv.slice(2);
  const session = await ort.InferenceSession.create(src, {
    graphOptimizationLevel: level || 'extended', optimizedModelFilePath: dst, logSeverityLevel: 3,
  });
  await session.release();
})().catch((e) => { console.error(e); process.exit(1); });
