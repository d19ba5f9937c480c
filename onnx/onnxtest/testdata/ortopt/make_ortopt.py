#!/usr/bin/python3
"""Builds the tests in this folder (see README.md): models as ONNX Runtime's graph optimizer writes
them, with its contrib operators (com.microsoft), and references from ONNX Runtime on those models.

Two kinds:
- <model>_ortopt: a model of ../models saved by an ONNX Runtime session with graph optimization
  "extended" and an optimized-model path (optimize.js), the source's inputs, outputs from ONNX
  Runtime running the optimized model;
- test_ms_*: small graphs written here with onnx.helper around one contrib op each, for the
  attributes and forms the optimized models do not reach (activations, epsilons, optional inputs),
  seeded inputs, outputs from ONNX Runtime.

usage: /usr/bin/python3 make_ortopt.py [NAME_REGEX | --manifest]
env:   ORT_NODE_MODULE (default /tmp/ort/node_modules/onnxruntime-node)
       ORT_RUN (default: shared/bench/onnx/ort_run.js beside the worktree)
"""
import collections
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, '..', '..', '..', '..'))
MODELS = os.path.join(HERE, '..', 'models')
ORT_RUN = os.environ.get('ORT_RUN', os.path.join(ROOT, '..', 'shared', 'bench', 'onnx', 'ort_run.js'))
ORT_MODULE = os.environ.get('ORT_NODE_MODULE', '/tmp/ort/node_modules/onnxruntime-node')
ENV = dict(os.environ, ORT_NODE_MODULE=ORT_MODULE)

NP_TO_ORT = {np.float32: 'float32', np.float64: 'float64', np.int64: 'int64', np.int32: 'int32',
             np.uint8: 'uint8', np.int8: 'int8', np.bool_: 'bool', np.float16: 'float16'}
ORT_TO_NP = {v: k for k, v in NP_TO_ORT.items()}

# Models of ../models whose optimized form holds contrib ops (and between them every op the
# optimizer wrote for any of ../models), with the source's tolerances.
OPTIMIZED = [
    'test_clip_two_tower_opset14', 'test_conformer_block_opset14', 'test_conv1d_bigru_speech_opset14',
    'test_convnext_effnet_opset17', 'test_deit_tiny_shape_opset17', 'test_detector_nms_roialign_opset13',
    'test_distilbert_mask_opset18', 'test_dlrm_embeddingbag_opset11', 'test_dynquant_distilbert_mask_opset13',
    'test_dynquant_gpt2_kv_opset14', 'test_gnn_scatter_opset16', 'test_hifigan_vocoder_opset13',
    'test_llama_gqa_rope_opset17', 'test_nonfinite_masking_opset14', 'test_scripted_while_growing_opset13',
    'test_squeezenet_like_opset8', 'test_superres_shuffle_opset11', 'test_swin_window_attention_opset14',
    'test_torch_mha_opset14', 'test_transformer_encdec_opset14', 'test_yolo_head_opset13',
    'test_quantized_qdq_cnn_opset13',
]

HAND = []


def hand(name, note):
    """Registers a hand-written graph: fn() -> (ModelProto, [list of input arrays per data set])."""
    def deco(fn):
        HAND.append(dict(name=name, fn=fn, note=note))
        return fn
    return deco


def rnd(seed, *shape, scale=1.0):
    return (np.random.RandomState(seed).randn(*shape) * scale).astype(np.float32)


def ms_model(nodes, inputs, outputs, inits=(), opset=17):
    g = helper.make_graph(nodes, 'g', inputs, outputs, initializer=list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid('', opset), helper.make_opsetid('com.microsoft', 1)])
    m.ir_version = 8
    return m


def vi(name, dims, t=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, t, dims)


def vo(name):
    """An output whose type ONNX Runtime infers."""
    return helper.make_empty_tensor_value_info(name)


@hand('test_ms_skip_layer_norm', 'SkipLayerNormalization: beta and bias given, epsilon 1e-5, all four outputs.')
def _skip_ln():
    h = 24
    n = helper.make_node('SkipLayerNormalization', ['x', 'skip', 'gamma', 'beta', 'bias'],
                         ['y', 'mean', 'inv_std', 'sum'], domain='com.microsoft', epsilon=1e-5)
    inits = [numpy_helper.from_array(rnd(1, h, scale=0.2) + 1, 'gamma'), numpy_helper.from_array(rnd(2, h, scale=0.1), 'beta'),
             numpy_helper.from_array(rnd(3, h, scale=0.1), 'bias')]
    m = ms_model([n], [vi('x', ['b', 's', h]), vi('skip', ['b', 's', h])],
                 [vi('y', None), vi('mean', None), vi('inv_std', None), vi('sum', None)], inits)
    return m, [[rnd(4, 2, 5, h), rnd(5, 2, 5, h)], [rnd(6, 1, 3, h, scale=30), rnd(7, 1, 3, h)]]


@hand('test_ms_skip_layer_norm_plain', 'SkipLayerNormalization: no beta or bias, default epsilon (1e-12), 2-D input.')
def _skip_ln_plain():
    h = 16
    n = helper.make_node('SkipLayerNormalization', ['x', 'skip', 'gamma'], ['y'], domain='com.microsoft')
    inits = [numpy_helper.from_array(rnd(1, h, scale=0.2) + 1, 'gamma')]
    m = ms_model([n], [vi('x', ['t', h]), vi('skip', ['t', h])], [vi('y', None)], inits)
    return m, [[rnd(4, 7, h), rnd(5, 7, h)]]


@hand('test_ms_skip_simplified_layer_norm', 'SkipSimplifiedLayerNormalization (RMS norm of input + skip + bias) with its sum output.')
def _skip_sln():
    h = 32
    n = helper.make_node('SkipSimplifiedLayerNormalization', ['x', 'skip', 'gamma', 'bias'], ['y', '', 'inv_std', 'sum'],
                         domain='com.microsoft', epsilon=1e-6)
    inits = [numpy_helper.from_array(rnd(1, h, scale=0.2) + 1, 'gamma'), numpy_helper.from_array(rnd(3, h, scale=0.1), 'bias')]
    m = ms_model([n], [vi('x', ['b', 's', h]), vi('skip', ['b', 's', h])], [vi('y', None), vi('inv_std', None), vi('sum', None)], inits)
    return m, [[rnd(4, 2, 3, h), rnd(5, 2, 3, h)]]


@hand('test_ms_simplified_layer_norm', 'SimplifiedLayerNormalization (ONNX Runtime registers it in the default domain): axis 1 of 3, both outputs.')
def _sln():
    n = helper.make_node('SimplifiedLayerNormalization', ['x', 'scale'], ['y', 'inv_std'], axis=1, epsilon=1e-5)
    inits = [numpy_helper.from_array(rnd(1, 6, 8, scale=0.2) + 1, 'scale')]
    m = ms_model([n], [vi('x', ['b', 6, 8])], [vi('y', None), vi('inv_std', None)], inits)
    return m, [[rnd(4, 3, 6, 8)]]


def _fused_conv(act, params, z):
    ins = ['x', 'w', 'b'] + (['z'] if z else [])
    attrs = dict(activation=act, kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[1, 1], dilations=[1, 1], group=1)
    if params is not None:
        attrs['activation_params'] = params
    n = helper.make_node('FusedConv', ins, ['y'], domain='com.microsoft', **attrs)
    inits = [numpy_helper.from_array(rnd(1, 4, 3, 3, 3, scale=0.4), 'w'), numpy_helper.from_array(rnd(2, 4, scale=0.1), 'b')]
    ivs = [vi('x', [1, 3, 6, 5])] + ([vi('z', [1, 4, 6, 5])] if z else [])
    m = ms_model([n], ivs, [vi('y', None)], inits)
    sets = [[rnd(3, 1, 3, 6, 5)] + ([rnd(4, 1, 4, 6, 5)] if z else [])]
    return m, sets


for _act, _params, _z in [('Relu', None, True), ('LeakyRelu', [0.2], False), ('HardSigmoid', [0.3, 0.4], True),
                          ('Clip', [-0.5, 0.5], False), ('Sigmoid', None, False), ('Tanh', None, True)]:
    hand('test_ms_fused_conv_%s%s' % (_act.lower(), '_z' if _z else ''),
         'FusedConv with activation %s%s%s.' % (_act, ' %s' % _params if _params else '', ' and a residual Z' if _z else ''))(
        lambda a=_act, p=_params, z=_z: _fused_conv(a, p, z))


@hand('test_ms_fused_gemm_leaky', 'FusedGemm: transB, alpha 0.5, beta 2, LeakyRelu with activation_alpha 0.1.')
def _fused_gemm():
    n = helper.make_node('FusedGemm', ['a', 'w', 'c'], ['y'], domain='com.microsoft', transB=1, alpha=0.5, beta=2.0,
                         activation='LeakyRelu', activation_alpha=0.1)
    inits = [numpy_helper.from_array(rnd(1, 6, 5), 'w'), numpy_helper.from_array(rnd(2, 6, scale=0.3), 'c')]
    m = ms_model([n], [vi('a', ['m', 5])], [vi('y', None)], inits)
    return m, [[rnd(3, 4, 5)]]


@hand('test_ms_fused_matmul_trans', 'FusedMatMul: transA and transB on rank-3 operands, alpha 0.25; rank-4 transBatchA and transBatchB with transB.')
def _fused_mm():
    n1 = helper.make_node('FusedMatMul', ['a', 'b'], ['y'], domain='com.microsoft', transA=1, transB=1, alpha=0.25)
    n2 = helper.make_node('FusedMatMul', ['c', 'd'], ['z'], domain='com.microsoft', transBatchA=1, alpha=2.0)
    n3 = helper.make_node('FusedMatMul', ['c', 'e'], ['w'], domain='com.microsoft', transBatchA=1, transBatchB=1, transB=1)
    m = ms_model([n1, n2, n3], [vi('a', [2, 5, 3]), vi('b', [2, 4, 5]), vi('c', [3, 2, 4, 5]), vi('d', [2, 4, 5, 6]),
                                vi('e', [6, 2, 4, 5])], [vi('y', None), vi('z', None), vi('w', None)])
    return m, [[rnd(1, 2, 5, 3), rnd(2, 2, 4, 5), rnd(3, 3, 2, 4, 5), rnd(4, 2, 4, 5, 6), rnd(5, 6, 2, 4, 5)]]


@hand('test_ms_gelus', 'Gelu, BiasGelu, FastGelu with and without bias, QuickGelu with alpha 1.5, over a wide range.')
def _gelus():
    nodes = [helper.make_node('Gelu', ['x'], ['g'], domain='com.microsoft'),
             helper.make_node('BiasGelu', ['x', 'bias'], ['bg'], domain='com.microsoft'),
             helper.make_node('FastGelu', ['x'], ['fg'], domain='com.microsoft'),
             helper.make_node('FastGelu', ['x', 'bias'], ['fgb'], domain='com.microsoft'),
             helper.make_node('QuickGelu', ['x'], ['qg'], domain='com.microsoft', alpha=1.5)]
    inits = [numpy_helper.from_array(rnd(1, 16, scale=0.5), 'bias')]
    m = ms_model(nodes, [vi('x', ['n', 16])], [vi(o, None) for o in ['g', 'bg', 'fg', 'fgb', 'qg']], inits)
    return m, [[rnd(2, 8, 16, scale=3)]]


@hand('test_ms_matmul_integer_to_float', 'MatMulIntegerToFloat: u8 A, s8 B with per-column scales and zero points, bias; and DynamicQuantizeMatMul on the same B.')
def _mmitf():
    k, nn = 12, 5
    rs = np.random.RandomState(9)
    b = rs.randint(-128, 128, size=(k, nn)).astype(np.int8)
    inits = [numpy_helper.from_array(b, 'b'), numpy_helper.from_array(np.float32(0.02), 'a_scale'),
             numpy_helper.from_array((rs.rand(nn) * 0.05 + 0.01).astype(np.float32), 'b_scale'),
             numpy_helper.from_array(np.uint8(7), 'a_zp'), numpy_helper.from_array(rs.randint(-3, 4, size=nn).astype(np.int8), 'b_zp'),
             numpy_helper.from_array(rnd(1, nn), 'bias')]
    n1 = helper.make_node('MatMulIntegerToFloat', ['a', 'b', 'a_scale', 'b_scale', 'a_zp', 'b_zp', 'bias'], ['y'], domain='com.microsoft')
    n2 = helper.make_node('DynamicQuantizeMatMul', ['f', 'b', 'b_scale', 'b_zp', 'bias'], ['z'], domain='com.microsoft')
    m = ms_model([n1, n2], [vi('a', ['m', k], TensorProto.UINT8), vi('f', ['m', k])], [vi('y', None), vi('z', None)], inits)
    return m, [[rs.randint(0, 256, size=(4, k)).astype(np.uint8), rnd(2, 4, k)]]


def qinit(name, v, dt):
    return numpy_helper.from_array(np.array(v, dtype=dt), name)


def qrand(seed, dt, *shape):
    lo, hi = (0, 256) if dt == np.uint8 else (-128, 128)
    return np.random.RandomState(seed).randint(lo, hi, size=shape).astype(dt)


@hand('test_ms_qlinear_add_mul', 'QLinearAdd (uint8, a row broadcast) and QLinearMul (int8), per-tensor scales and zero points.')
def _qadd():
    U, S = TensorProto.UINT8, TensorProto.INT8
    inits = [qinit('sa', 0.05, np.float32), qinit('za', 120, np.uint8), qinit('sb', 0.02, np.float32), qinit('zb', 3, np.uint8),
             qinit('sc', 0.07, np.float32), qinit('zc', 131, np.uint8),
             qinit('sd', 0.03, np.float32), qinit('zd', -5, np.int8), qinit('se', 0.04, np.float32), qinit('ze', 2, np.int8),
             qinit('sf', 0.5, np.float32), qinit('zf', -1, np.int8),
             qinit('s4', 0.25, np.float32), qinit('s2', 0.5, np.float32), qinit('z1', 1, np.uint8)]
    nodes = [helper.make_node('QLinearAdd', ['a', 'sa', 'za', 'b', 'sb', 'zb', 'sc', 'zc'], ['c'], domain='com.microsoft'),
             helper.make_node('QLinearMul', ['d', 'sd', 'zd', 'e', 'se', 'ze', 'sf', 'zf'], ['f'], domain='com.microsoft'),
             # scale ratios of exactly one half: half the sums are ties, and the odd output zero point
             # tells rounding before adding it from rounding after
             helper.make_node('QLinearAdd', ['a', 's4', 'za', 'b', 's4', 'zb', 's2', 'z1'], ['t'], domain='com.microsoft')]
    m = ms_model(nodes, [vi('a', [2, 3, 8], U), vi('b', [8], U), vi('d', [4, 8], S), vi('e', [4, 8], S)],
                 [vo('c'), vo('f'), vo('t')], inits)
    return m, [[qrand(1, np.uint8, 2, 3, 8), qrand(2, np.uint8, 8), qrand(3, np.int8, 4, 8), qrand(4, np.int8, 4, 8)]]


@hand('test_ms_qlinear_unary', 'QLinearSigmoid and QLinearLeakyRelu (alpha 0.1) over every uint8 value.')
def _qunary():
    U = TensorProto.UINT8
    inits = [qinit('sx', 0.06, np.float32), qinit('zx', 128, np.uint8), qinit('sy', 1 / 256, np.float32), qinit('zy', 0, np.uint8),
             qinit('sl', 0.05, np.float32), qinit('zl', 100, np.uint8)]
    nodes = [helper.make_node('QLinearSigmoid', ['x', 'sx', 'zx', 'sy', 'zy'], ['y'], domain='com.microsoft'),
             helper.make_node('QLinearLeakyRelu', ['x', 'sx', 'zx', 'sl', 'zl'], ['l'], domain='com.microsoft', alpha=0.1)]
    m = ms_model(nodes, [vi('x', [256], U)], [vo('y'), vo('l')], inits)
    return m, [[np.arange(256, dtype=np.uint8)]]


@hand('test_ms_qlinear_pools', 'QLinearGlobalAveragePool (NCHW and channels_last) and QLinearAveragePool (3x3, stride 2, pads, count_include_pad 0).')
def _qpools():
    U = TensorProto.UINT8
    inits = [qinit('sx', 0.04, np.float32), qinit('zx', 90, np.uint8), qinit('sy', 0.03, np.float32), qinit('zy', 70, np.uint8)]
    nodes = [helper.make_node('QLinearGlobalAveragePool', ['x', 'sx', 'zx', 'sy', 'zy'], ['g'], domain='com.microsoft'),
             helper.make_node('QLinearGlobalAveragePool', ['x', 'sx', 'zx', 'sy', 'zy'], ['gl'], domain='com.microsoft', channels_last=1),
             helper.make_node('QLinearAveragePool', ['x', 'sx', 'zx', 'sy', 'zy'], ['p'], domain='com.microsoft',
                              kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], count_include_pad=0)]
    m = ms_model(nodes, [vi('x', [2, 3, 7, 6], U)], [vo('g'), vo('gl'), vo('p')], inits)
    return m, [[qrand(5, np.uint8, 2, 3, 7, 6)]]


@hand('test_ms_qlinear_concat', 'QLinearConcat of three uint8 tensors along axis 1, two requantized and one on the output scale.')
def _qconcat():
    U = TensorProto.UINT8
    inits = [qinit('sy', 0.05, np.float32), qinit('zy', 128, np.uint8), qinit('s1', 0.02, np.float32), qinit('z1', 10, np.uint8),
             qinit('s2', 0.11, np.float32), qinit('z2', 200, np.uint8)]
    n = helper.make_node('QLinearConcat', ['sy', 'zy', 'a', 's1', 'z1', 'b', 's2', 'z2', 'c', 'sy', 'zy'], ['y'],
                         domain='com.microsoft', axis=1)
    m = ms_model([n], [vi('a', [2, 3, 4], U), vi('b', [2, 1, 4], U), vi('c', [2, 2, 4], U)], [vo('y')], inits)
    return m, [[qrand(6, np.uint8, 2, 3, 4), qrand(7, np.uint8, 2, 1, 4), qrand(8, np.uint8, 2, 2, 4)]]


@hand('test_ms_qgemm', 'QGemm: uint8 A, int8 B (transB) with bias C and alpha 0.5, quantized output; and the float output without y_scale.')
def _qgemm():
    k, n = 10, 6
    inits = [qinit('sa', 0.03, np.float32), qinit('za', 100, np.uint8), numpy_helper.from_array(qrand(9, np.int8, n, k), 'b'),
             qinit('sb', 0.02, np.float32), qinit('zb', 0, np.int8),
             numpy_helper.from_array(np.random.RandomState(10).randint(-500, 500, size=n).astype(np.int32), 'c'),
             qinit('sy', 0.08, np.float32), qinit('zy', 120, np.uint8)]
    n1 = helper.make_node('QGemm', ['a', 'sa', 'za', 'b', 'sb', 'zb', 'c', 'sy', 'zy'], ['y'], domain='com.microsoft',
                          transB=1, alpha=0.5)
    n2 = helper.make_node('QGemm', ['a', 'sa', 'za', 'b', 'sb', 'zb', 'c'], ['f'], domain='com.microsoft', transB=1)
    m = ms_model([n1, n2], [vi('a', ['m', k], TensorProto.UINT8)], [vo('y'), vo('f')], inits)
    return m, [[qrand(11, np.uint8, 5, k)]]


@hand('test_ms_quantize_linear', 'com.microsoft QuantizeLinear (per channel, axis 1) and DequantizeLinear, as older quantization tools write them.')
def _qlin():
    inits = [numpy_helper.from_array(np.array([0.02, 0.05, 0.1], np.float32), 's'), numpy_helper.from_array(np.array([0, 10, 250], np.uint8), 'z')]
    nodes = [helper.make_node('QuantizeLinear', ['x', 's', 'z'], ['q'], domain='com.microsoft', axis=1),
             helper.make_node('DequantizeLinear', ['q', 's', 'z'], ['d'], domain='com.microsoft', axis=1)]
    m = ms_model(nodes, [vi('x', [2, 3, 4])], [vo('q'), vo('d')], inits)
    return m, [[rnd(12, 2, 3, 4, scale=2)]]


def _attention(name, nheads, hin, sizes, mask, past=0, uni=0, bias_in=False, extra=None):
    """An Attention node over input [2, 5, hin]: mask is None, 'raw', 'lengths', 'startend' or '3d'."""
    b, sq = 2, 5
    total = past + sq
    rs = np.random.RandomState(len(name))
    attrs = dict(num_heads=nheads, unidirectional=uni)
    if sizes:
        attrs['qkv_hidden_sizes'] = sizes
    if extra:
        attrs.update(extra)
    d = sum(sizes) if sizes else 3 * hin
    inits = [numpy_helper.from_array((rs.randn(hin, d) / np.sqrt(hin)).astype(np.float32), 'w'),
             numpy_helper.from_array((rs.randn(d) * 0.1).astype(np.float32), 'bias')]
    ins, ivs, data = ['x', 'w', 'bias'], [vi('x', [b, sq, hin])], [rnd(31, b, sq, hin)]
    if mask == 'raw':
        m = np.ones((b, total), np.int32)
        m[1, -2:] = 0
    elif mask == 'lengths':
        m = np.array([total, total - 2], np.int32)
    elif mask == 'startend':
        m = np.array([total, total - 1, 0, 2], np.int32)
    elif mask == '3d':
        m = (rs.rand(b, sq, total) > 0.3).astype(np.int32)
        m[:, :, 0] = 1
    ins.append('mask' if mask else '')
    if mask:
        ivs.append(vi('mask', list(m.shape), TensorProto.INT32))
        data.append(m)
    hk = (sizes[0] if sizes else hin) // nheads
    outs = [vo('y')]
    if past:
        ins.append('past')
        ivs.append(vi('past', [2, b, nheads, past, hk]))
        data.append(rnd(32, 2, b, nheads, past, hk))
        outs.append(vo('present'))
    elif bias_in:
        ins.append('')
    if bias_in:
        ins.append('ab')
        ivs.append(vi('ab', [1, nheads, sq, total]))
        data.append(rnd(33, 1, nheads, sq, total))
    n = helper.make_node('Attention', ins, ['y'] + (['present'] if past else []), domain='com.microsoft', **attrs)
    return ms_model([n], ivs, outs, inits), [data]


hand('test_ms_attention_raw_mask', 'Attention (BERT): 4 heads, hidden 16, bias, a raw 1/0 mask [B, T] with padding.')(
    lambda: _attention('a1', 4, 16, None, 'raw'))
hand('test_ms_attention_lengths', 'Attention: mask_index as valid lengths [B].')(lambda: _attention('a22', 2, 8, None, 'lengths'))
hand('test_ms_attention_start_end', 'Attention: mask_index as exclusive ends then inclusive starts [2B].')(
    lambda: _attention('a333', 2, 8, None, 'startend'))
hand('test_ms_attention_gpt2_past', 'Attention (GPT-2): unidirectional, past state of 3 positions, present output, raw mask over past and new.')(
    lambda: _attention('a4444', 4, 16, None, 'raw', past=3, uni=1))
hand('test_ms_attention_sizes_bias', 'Attention: qkv_hidden_sizes [16, 16, 8], a 3-D mask, an attention bias [1, N, S, T], scale 0.2.')(
    lambda: _attention('a55555', 4, 12, [16, 16, 8], '3d', bias_in=True, extra=dict(scale=0.2)))


@hand('test_ms_embed_layer_norm', 'EmbedLayerNormalization: word, position and segment embeddings, a mask, all three outputs; and a second node with position_ids and no segments.')
def _embed():
    v, p, h = 30, 12, 8
    rs = np.random.RandomState(41)
    inits = [numpy_helper.from_array(rnd(1, v, h), 'word'), numpy_helper.from_array(rnd(2, p, h), 'pos'),
             numpy_helper.from_array(rnd(3, 2, h), 'seg'), numpy_helper.from_array(rnd(4, h, scale=0.1) + 1, 'gamma'),
             numpy_helper.from_array(rnd(5, h, scale=0.1), 'beta')]
    n1 = helper.make_node('EmbedLayerNormalization', ['ids', 'segs', 'word', 'pos', 'seg', 'gamma', 'beta', 'mask'],
                          ['y', 'mask_index', 'sum'], domain='com.microsoft', epsilon=1e-5)
    n2 = helper.make_node('EmbedLayerNormalization', ['ids', '', 'word', 'pos', '', 'gamma', 'beta', '', 'pids'],
                          ['y2', 'mask_index2'], domain='com.microsoft')
    ivs = [vi('ids', [2, 6], TensorProto.INT32), vi('segs', [2, 6], TensorProto.INT32), vi('mask', [2, 6], TensorProto.INT32),
           vi('pids', [1, 6], TensorProto.INT32)]
    m = ms_model([n1, n2], ivs, [vo('y'), vo('mask_index'), vo('sum'), vo('y2'), vo('mask_index2')], inits)
    mask = np.ones((2, 6), np.int32)
    mask[1, 4:] = 0
    return m, [[rs.randint(0, v, size=(2, 6)).astype(np.int32), rs.randint(0, 2, size=(2, 6)).astype(np.int32), mask,
                np.array([[5, 4, 3, 2, 1, 0]], np.int32)]]


def _rope(fourd, interleaved, rot, offset):
    b, s, n, h, maxpos = 2, 4, 3, 8, 16
    r = rot or h
    freqs = np.outer(np.arange(maxpos), 1.0 / (10000 ** (np.arange(0, r, 2) / r)))
    inits = [numpy_helper.from_array(np.cos(freqs).astype(np.float32), 'cos'), numpy_helper.from_array(np.sin(freqs).astype(np.float32), 'sin')]
    attrs = dict(interleaved=interleaved)
    if rot:
        attrs.update(rotary_embedding_dim=rot, num_heads=n)
    node = helper.make_node('RotaryEmbedding', ['x', 'pos', 'cos', 'sin'], ['y'], domain='com.microsoft', **attrs)
    shape = [b, n, s, h] if fourd else [b, s, n * h]
    pos = np.array([offset], np.int64) if offset is not None else np.random.RandomState(7).randint(0, maxpos, size=(b, s)).astype(np.int64)
    m = ms_model([node], [vi('x', shape), vi('pos', list(pos.shape), TensorProto.INT64)], [vo('y')], inits)
    return m, [[rnd(21, *shape), pos]]


hand('test_ms_rotary_3d', 'RotaryEmbedding: [B, S, N·H] input, halves rotated, position_ids [B, S].')(lambda: _rope(False, 0, 0, None))
hand('test_ms_rotary_4d_interleaved', 'RotaryEmbedding: [B, N, S, H] input, interleaved pairs, position_ids [1] (an offset of 5).')(
    lambda: _rope(True, 1, 0, 5))
hand('test_ms_rotary_partial', 'RotaryEmbedding: 3-D input, num_heads 3, rotary_embedding_dim 4 of head size 8 (the rest passes through).')(
    lambda: _rope(False, 0, 4, None))


@hand('test_ms_mha_self', 'MultiHeadAttention: query, key and value [B, S, 16], 4 heads, bias [48], a raw key_padding_mask [B, T], present outputs.')
def _mha_self():
    b, sq, d = 2, 5, 16
    node = helper.make_node('MultiHeadAttention', ['q', 'k', 'v', 'bias', 'mask'], ['y', 'pres_k', 'pres_v'], domain='com.microsoft', num_heads=4)
    mask = np.ones((b, sq), np.int32)
    mask[0, -1] = 0
    inits = [numpy_helper.from_array(rnd(51, 3 * d, scale=0.2), 'bias')]
    m = ms_model([node], [vi('q', [b, sq, d]), vi('k', [b, sq, d]), vi('v', [b, sq, d]), vi('mask', [b, sq], TensorProto.INT32)],
                 [vo('y'), vo('pres_k'), vo('pres_v')], inits)
    return m, [[rnd(52, b, sq, d), rnd(53, b, sq, d), rnd(54, b, sq, d), mask]]


@hand('test_ms_mha_cross', 'MultiHeadAttention: cross attention over key and value already split into heads [B, N, L, h], an attention bias [1, N, S, L], scale 0.3.')
def _mha_cross():
    b, sq, n, l, h = 2, 3, 4, 6, 4
    node = helper.make_node('MultiHeadAttention', ['q', 'k', 'v', '', '', 'ab'], ['y'], domain='com.microsoft', num_heads=n, scale=0.3)
    m = ms_model([node], [vi('q', [b, sq, n * h]), vi('k', [b, n, l, h]), vi('v', [b, n, l, h]), vi('ab', [1, n, sq, l])], [vo('y')])
    return m, [[rnd(55, b, sq, n * h), rnd(56, b, n, l, h), rnd(57, b, n, l, h), rnd(58, 1, n, sq, l)]]


@hand('test_ms_mha_past_causal', 'MultiHeadAttention: unidirectional self attention with past_key and past_value of 2 positions, valid lengths [B], present outputs.')
def _mha_past():
    b, sq, n, h, p = 2, 3, 4, 4, 2
    node = helper.make_node('MultiHeadAttention', ['q', 'k', 'v', '', 'mask', '', 'pk', 'pv'], ['y', 'pres_k', 'pres_v'],
                            domain='com.microsoft', num_heads=n, unidirectional=1)
    ivs = [vi('q', [b, sq, n * h]), vi('k', [b, sq, n * h]), vi('v', [b, sq, n * h]), vi('mask', [b], TensorProto.INT32),
           vi('pk', [b, n, p, h]), vi('pv', [b, n, p, h])]
    m = ms_model([node], ivs, [vo('y'), vo('pres_k'), vo('pres_v')])
    return m, [[rnd(59, b, sq, n * h), rnd(60, b, sq, n * h), rnd(61, b, sq, n * h), np.array([p + sq, p + sq - 1], np.int32),
                rnd(62, b, n, p, h), rnd(63, b, n, p, h)]]


def _pack(vals, bits):
    """Packs integers (last axis) lowest bits first, as MatMulNBits stores them."""
    per = 8 // bits
    vals = vals.reshape(vals.shape[:-1] + (vals.shape[-1] // per, per)).astype(np.uint8)
    out = np.zeros(vals.shape[:-1], np.uint8)
    for j in range(per):
        out |= (vals[..., j] << (bits * j)).astype(np.uint8)
    return out


def _nbits(bits, k, n, bs, zp, bias, seed):
    rs = np.random.RandomState(seed)
    blocks = (k + bs - 1) // bs
    q = rs.randint(0, 1 << bits, size=(n, blocks, bs))
    q[:, -1, k - (blocks - 1) * bs:] = 0  # past K: padding
    inits = [numpy_helper.from_array(_pack(q, bits), 'b%d' % seed),
             numpy_helper.from_array((rs.rand(n * blocks) * 0.05 + 0.01).astype(np.float32), 's%d' % seed)]
    ins = ['a%d' % seed, 'b%d' % seed, 's%d' % seed]
    if zp:
        per_row = (blocks * bits + 7) // 8
        z = rs.randint(0, 1 << bits, size=(n, per_row * 8 // bits))
        inits.append(numpy_helper.from_array(_pack(z, bits).reshape(-1), 'z%d' % seed))
        ins.append('z%d' % seed)
    if bias:
        inits.append(numpy_helper.from_array(rnd(seed, n), 'bias%d' % seed))
        ins += [''] * (5 - len(ins)) + ['bias%d' % seed]
    node = helper.make_node('MatMulNBits', ins, ['y%d' % seed], domain='com.microsoft', K=k, N=n, bits=bits, block_size=bs)
    return node, inits


@hand('test_ms_matmul_nbits', 'MatMulNBits: 4 bits in blocks of 16 with packed zero points and bias over K = 40 (a padded last block), 3-D A; 8 bits in blocks of 32 without zero points.')
def _mmnbits():
    n1, i1 = _nbits(4, 40, 6, 16, True, True, 71)
    n2, i2 = _nbits(8, 64, 5, 32, False, False, 72)
    m = ms_model([n1, n2], [vi('a71', [2, 3, 40]), vi('a72', [4, 64])], [vo('y71'), vo('y72')], i1 + i2)
    return m, [[rnd(73, 2, 3, 40), rnd(74, 4, 64)]]


def _gqa(b, s, past, n, nkv, h, packed=False, rotary=False, extra=None, seqlens=None):
    total = past + s
    attrs = dict(num_heads=n, kv_num_heads=nkv)
    if rotary:
        attrs['do_rotary'] = 1
    if extra:
        attrs.update(extra)
    ins = ['q', '' if packed else 'k', '' if packed else 'v', 'pk', 'pv', 'seqlens', 'total']
    ivs = [vi('q', [b, s, (n + 2 * nkv) * h if packed else n * h])]
    data = [rnd(81, b, s, (n + 2 * nkv) * h if packed else n * h)]
    if not packed:
        ivs += [vi('k', [b, s, nkv * h]), vi('v', [b, s, nkv * h])]
        data += [rnd(82, b, s, nkv * h), rnd(83, b, s, nkv * h)]
    ivs += [vi('pk', [b, nkv, past, h]), vi('pv', [b, nkv, past, h]), vi('seqlens', [b], TensorProto.INT32)]
    data += [rnd(84, b, nkv, past, h), rnd(85, b, nkv, past, h),
             np.array(seqlens if seqlens is not None else [total - 1] * b, np.int32)]
    inits = [numpy_helper.from_array(np.array(total, np.int32), 'total')]
    if rotary:
        r = h // 2 if rotary == 'partial' else h
        freqs = np.outer(np.arange(32), 1.0 / (10000 ** (np.arange(0, r, 2) / r)))
        inits += [numpy_helper.from_array(np.cos(freqs).astype(np.float32), 'cos'), numpy_helper.from_array(np.sin(freqs).astype(np.float32), 'sin')]
        ins += ['cos', 'sin']
    node = helper.make_node('GroupQueryAttention', ins, ['y', 'present_k', 'present_v'], domain='com.microsoft', **attrs)
    return ms_model([node], ivs, [vo('y'), vo('present_k'), vo('present_v')], inits), [data]


hand('test_ms_gqa_prompt', 'GroupQueryAttention: first prompt of 5 tokens, 4 query heads over 2 key/value heads, an empty past.')(
    lambda: _gqa(1, 5, 0, 4, 2, 8))
hand('test_ms_gqa_decode_rotary', 'GroupQueryAttention: one new token over a past of 4 in two batch rows, rotary embedding of query and key (halves).')(
    lambda: _gqa(2, 1, 4, 4, 2, 16, rotary=True))
hand('test_ms_gqa_packed_window', 'GroupQueryAttention: packed QKV, a prompt of 6, local_window_size 3, interleaved rotary over half of each head.')(
    lambda: _gqa(1, 6, 0, 2, 1, 32, packed=True, rotary='partial', extra=dict(local_window_size=3, rotary_interleaved=1)))
hand('test_ms_gqa_chunk', 'GroupQueryAttention: a second chunk of 3 tokens after 2 in the cache (chunked prefill), softcap 4.')(
    lambda: _gqa(1, 3, 2, 4, 4, 8, extra=dict(softcap=4.0)))


@hand('test_ms_gqa_genai_inputs', 'GroupQueryAttention fed as onnxruntime-genai wires it: seqlens_k and total_sequence_length computed from attention_mask in the graph (ReduceSum, Shape, Gather, Cast); a decoding step over a past of 3.')
def _gqa_genai():
    b, s, past, n, nkv, h = 1, 1, 3, 4, 2, 16
    total = past + s
    nodes = [
        helper.make_node('ReduceSum', ['mask', 'axes1'], ['msum'], keepdims=0),
        helper.make_node('Sub', ['msum', 'one64'], ['msum1']),
        helper.make_node('Cast', ['msum1'], ['seqlens'], to=TensorProto.INT32),
        helper.make_node('Shape', ['mask'], ['mshape']),
        helper.make_node('Gather', ['mshape', 'one64'], ['tlen'], axis=0),
        helper.make_node('Cast', ['tlen'], ['total'], to=TensorProto.INT32),
        helper.make_node('GroupQueryAttention', ['q', 'k', 'v', 'pk', 'pv', 'seqlens', 'total'], ['y', 'present_k', 'present_v'],
                         domain='com.microsoft', num_heads=n, kv_num_heads=nkv),
    ]
    inits = [numpy_helper.from_array(np.array([1], np.int64), 'axes1'), numpy_helper.from_array(np.array(1, np.int64), 'one64')]
    ivs = [vi('q', [b, s, n * h]), vi('k', [b, s, nkv * h]), vi('v', [b, s, nkv * h]), vi('pk', [b, nkv, past, h]),
           vi('pv', [b, nkv, past, h]), vi('mask', [b, 'total'], TensorProto.INT64)]
    m = ms_model(nodes, ivs, [vo('y'), vo('present_k'), vo('present_v')], inits)
    return m, [[rnd(91, b, s, n * h), rnd(92, b, s, nkv * h), rnd(93, b, s, nkv * h), rnd(94, b, nkv, past, h), rnd(95, b, nkv, past, h),
                np.ones((b, total), np.int64)]]


def _q4(name, w, bs=32):
    """MatMulNBits initializers for float weights w [K, N]: 4 bits, blocks of bs along K, zero points."""
    k, n = w.shape
    blocks = (k + bs - 1) // bs
    wt = np.zeros((n, blocks * bs), np.float32)
    wt[:, :k] = w.T
    wt = wt.reshape(n, blocks, bs)
    lo, hi = wt.min(axis=2), wt.max(axis=2)
    scale = np.maximum(hi - lo, 1e-6) / 15
    zp = np.clip(np.round(-lo / scale), 0, 15)
    q = np.clip(np.round(wt / scale[..., None] + zp[..., None]), 0, 15)
    per_row = (blocks * 4 + 7) // 8
    zpp = np.zeros((n, per_row * 2))
    zpp[:, :blocks] = zp
    return [numpy_helper.from_array(_pack(q, 4), name + '_q'), numpy_helper.from_array(scale.reshape(-1).astype(np.float32), name + '_s'),
            numpy_helper.from_array(_pack(zpp, 4).reshape(-1), name + '_z')]


@hand('test_ms_genai_decoder', 'A two-layer int4 decoder as onnxruntime-genai writes one: SimplifiedLayerNormalization, MatMulNBits projections, GroupQueryAttention with rotary and a KV cache, SkipSimplifiedLayerNormalization, a SiLU MLP; a prompt of 5 tokens and a decoding step over it.')
def _genai():
    vocab, d, n, nkv, h, ff, layers = 48, 64, 4, 2, 16, 96, 2
    rs = np.random.RandomState(101)
    nodes, inits = [], []
    inits.append(numpy_helper.from_array((rs.randn(vocab, d) * 0.5).astype(np.float32), 'embed'))
    freqs = np.outer(np.arange(64), 1.0 / (10000 ** (np.arange(0, h, 2) / h)))
    inits += [numpy_helper.from_array(np.cos(freqs).astype(np.float32), 'cos'), numpy_helper.from_array(np.sin(freqs).astype(np.float32), 'sin'),
              numpy_helper.from_array(np.array([1], np.int64), 'axes1'), numpy_helper.from_array(np.array(1, np.int64), 'one64')]
    nodes += [helper.make_node('Gather', ['embed', 'ids'], ['x0']),
              helper.make_node('ReduceSum', ['mask', 'axes1'], ['msum'], keepdims=0),
              helper.make_node('Sub', ['msum', 'one64'], ['msum1']),
              helper.make_node('Cast', ['msum1'], ['seqlens'], to=TensorProto.INT32),
              helper.make_node('Shape', ['mask'], ['mshape']),
              helper.make_node('Gather', ['mshape', 'one64'], ['tlen'], axis=0),
              helper.make_node('Cast', ['tlen'], ['total'], to=TensorProto.INT32)]
    x, ins, outs = 'x0', [vi('ids', [1, 's'], TensorProto.INT64), vi('mask', [1, 't'], TensorProto.INT64)], [vo('logits')]
    def mm(name, src, w):
        inits.extend(_q4(name, w))
        nodes.append(helper.make_node('MatMulNBits', [src, name + '_q', name + '_s', name + '_z'], [name + '_y'], domain='com.microsoft',
                                      K=w.shape[0], N=w.shape[1], bits=4, block_size=32))
        return name + '_y'
    for l in range(layers):
        p = 'l%d_' % l
        inits.append(numpy_helper.from_array((1 + rs.randn(d) * 0.1).astype(np.float32), p + 'g1'))
        inits.append(numpy_helper.from_array((1 + rs.randn(d) * 0.1).astype(np.float32), p + 'g2'))
        nodes.append(helper.make_node('SimplifiedLayerNormalization', [x, p + 'g1'], [p + 'n1'], axis=-1, epsilon=1e-5))
        res = x
        qkv = mm(p + 'qkv', p + 'n1', (rs.randn(d, (n + 2 * nkv) * h) / np.sqrt(d)).astype(np.float32))
        ins += [vi(p + 'pk', [1, nkv, 'p', h]), vi(p + 'pv', [1, nkv, 'p', h])]
        outs += [vo(p + 'present_k'), vo(p + 'present_v')]
        nodes.append(helper.make_node('GroupQueryAttention', [qkv, '', '', p + 'pk', p + 'pv', 'seqlens', 'total', 'cos', 'sin'],
                                      [p + 'attn', p + 'present_k', p + 'present_v'], domain='com.microsoft', num_heads=n, kv_num_heads=nkv,
                                      do_rotary=1))
        o = mm(p + 'o', p + 'attn', (rs.randn(n * h, d) / np.sqrt(n * h)).astype(np.float32))
        nodes.append(helper.make_node('SkipSimplifiedLayerNormalization', [o, res, p + 'g2'], [p + 'n2', '', '', p + 'res2'],
                                      domain='com.microsoft', epsilon=1e-5))
        gate = mm(p + 'gate', p + 'n2', (rs.randn(d, ff) / np.sqrt(d)).astype(np.float32))
        up = mm(p + 'up', p + 'n2', (rs.randn(d, ff) / np.sqrt(d)).astype(np.float32))
        nodes += [helper.make_node('Sigmoid', [gate], [p + 'sg']), helper.make_node('Mul', [gate, p + 'sg'], [p + 'silu']),
                  helper.make_node('Mul', [p + 'silu', up], [p + 'act'])]
        down = mm(p + 'down', p + 'act', (rs.randn(ff, d) / np.sqrt(ff)).astype(np.float32))
        nodes.append(helper.make_node('Add', [down, p + 'res2'], [p + 'out']))
        x = p + 'out'
    inits.append(numpy_helper.from_array((1 + rs.randn(d) * 0.1).astype(np.float32), 'gf'))
    nodes.append(helper.make_node('SimplifiedLayerNormalization', [x, 'gf'], ['nf'], axis=-1, epsilon=1e-5))
    inits.append(numpy_helper.from_array((rs.randn(d, vocab) / np.sqrt(d)).astype(np.float32), 'lm'))
    nodes.append(helper.make_node('MatMul', ['nf', 'lm'], ['logits']))
    m = ms_model(nodes, ins, outs, inits)
    prompt_ids = rs.randint(0, vocab, size=(1, 5)).astype(np.int64)
    empty = [np.zeros((1, nkv, 0, h), np.float32)] * (2 * layers)
    step_past = [rnd(110 + i, 1, nkv, 5, h) for i in range(2 * layers)]
    return m, [[prompt_ids, np.ones((1, 5), np.int64)] + empty,
               [rs.randint(0, vocab, size=(1, 1)).astype(np.int64), np.ones((1, 6), np.int64)] + step_past]


@hand('test_ms_gather_block_quantized', 'GatherBlockQuantized (onnxruntime-genai quantized embeddings): 4-bit uint8-packed rows in blocks of 32 with packed zero points, and 8-bit rows without.')
def _gbq():
    rs = np.random.RandomState(121)
    vocab, hidden, bs = 20, 64, 32
    q4 = rs.randint(0, 16, size=(vocab, hidden))
    z4 = rs.randint(0, 16, size=(vocab, 2))
    q8 = rs.randint(0, 256, size=(vocab, hidden))
    inits = [numpy_helper.from_array(_pack(q4, 4), 'd4'), numpy_helper.from_array((rs.rand(vocab, hidden // bs) * 0.1 + 0.01).astype(np.float32), 's4'),
             numpy_helper.from_array(_pack(z4, 4), 'z4'),
             numpy_helper.from_array(q8.astype(np.uint8), 'd8'), numpy_helper.from_array((rs.rand(vocab, hidden // bs) * 0.01).astype(np.float32), 's8')]
    n1 = helper.make_node('GatherBlockQuantized', ['d4', 'ids', 's4', 'z4'], ['e4'], domain='com.microsoft', bits=4, block_size=bs,
                          gather_axis=0, quantize_axis=1)
    n2 = helper.make_node('GatherBlockQuantized', ['d8', 'ids', 's8'], ['e8'], domain='com.microsoft', bits=8, block_size=bs,
                          gather_axis=0, quantize_axis=1)
    m = ms_model([n1, n2], [vi('ids', [2, 3], TensorProto.INT64)], [vo('e4'), vo('e8')], inits)
    return m, [[rs.randint(0, vocab, size=(2, 3)).astype(np.int64)]]


@hand('test_ms_gqa_sinks', "GroupQueryAttention: smooth_softmax (one more zero logit in each row's denominator) on a prompt of 4.")
def _gqa_sinks():
    return _gqa(1, 4, 0, 4, 2, 16, extra=dict(smooth_softmax=1))


@hand('test_ms_gqa_head_sink', 'GroupQueryAttention: per-head attention sinks (head_sink input) on a decoding step over a past of 3.')
def _gqa_head_sink():
    m, d = _gqa(1, 1, 3, 4, 2, 16)
    g = m.graph
    node = g.node[0]
    while len(node.input) < 12:
        node.input.append('')
    node.input[11] = 'sink'
    g.initializer.append(numpy_helper.from_array(rnd(130, 4, scale=2), 'sink'))
    return m, d


def ort_outputs(jobs, tmp):
    jf = os.path.join(tmp, 'jobs.json')
    with open(jf, 'w') as f:
        json.dump(jobs, f)
    subprocess.check_call(['node', ORT_RUN, 'run', jf], env=ENV)


def write_outputs(job, outs, dst):
    for k, s in enumerate(job['sets']):
        recs = {r['name']: r for r in json.load(open(os.path.join(s['outdir'], 'outputs.json')))}
        for j, oname in enumerate(outs):
            r = recs[oname]
            a = np.fromfile(r['file'], dtype=ORT_TO_NP[r['type']]).reshape(r['dims'])
            with open(os.path.join(dst, 'test_data_set_%d' % k, 'output_%d.pb' % j), 'wb') as f:
                f.write(numpy_helper.from_array(a, oname).SerializeToString())


def source_tolerances():
    tol = {}
    for line in open(os.path.join(MODELS, 'MANIFEST.tsv')).read().splitlines()[1:]:
        f = line.split('\t')
        tol[f[0]] = (float(f[2]), float(f[3]))
    return tol


def contrib_ops(path):
    m = onnx.load(path)
    c = collections.Counter()

    def walk(g):
        for n in g.node:
            if n.domain not in ('', 'ai.onnx') or n.op_type == 'SimplifiedLayerNormalization':
                c[n.op_type] += 1
            for a in n.attribute:
                if a.g.node:
                    walk(a.g)
                for gg in a.graphs:
                    walk(gg)
    walk(m.graph)
    return ' '.join('%s×%d' % kv for kv in sorted(c.items()))


def main():
    if sys.argv[1:] == ['--manifest']:
        write_manifest()
        return
    pat = re.compile(sys.argv[1] if len(sys.argv) > 1 else '.')
    tmp = tempfile.mkdtemp(prefix='make_ortopt_')
    jobs, outs = [], []
    for src in OPTIMIZED:
        name = src + '_ortopt'
        if not pat.search(name):
            continue
        dst = os.path.join(HERE, name)
        shutil.rmtree(dst, ignore_errors=True)
        os.makedirs(dst)
        path = os.path.join(dst, 'model.onnx')
        subprocess.check_call(['node', os.path.join(HERE, 'optimize.js'), os.path.join(MODELS, src, 'model.onnx'), path, 'extended'], env=ENV)
        mp = onnx.load(path)
        inits = {t.name for t in mp.graph.initializer}
        gin = [i.name for i in mp.graph.input if i.name not in inits]
        job = dict(name=name, model=path, sets=[])
        for sd in sorted(glob.glob(os.path.join(MODELS, src, 'test_data_set_*'))):
            k = len(job['sets'])
            d = os.path.join(dst, 'test_data_set_%d' % k)
            os.makedirs(d)
            ins = []
            for j in range(len(gin)):
                t = onnx.TensorProto()
                t.ParseFromString(open(os.path.join(sd, 'input_%d.pb' % j), 'rb').read())
                shutil.copy(os.path.join(sd, 'input_%d.pb' % j), d)
                a = np.ascontiguousarray(numpy_helper.to_array(t))
                raw = os.path.join(tmp, '%s_%d_%d.bin' % (name, k, j))
                a.tofile(raw)
                ins.append(dict(name=t.name or gin[j], type=NP_TO_ORT[a.dtype.type], dims=list(a.shape), file=raw))
            job['sets'].append(dict(inputs=ins, outdir=os.path.join(tmp, '%s_%d' % (name, k))))
        jobs.append(job)
        outs.append((dst, [o.name for o in mp.graph.output]))
    for h in HAND:
        if not pat.search(h['name']):
            continue
        dst = os.path.join(HERE, h['name'])
        shutil.rmtree(dst, ignore_errors=True)
        os.makedirs(dst)
        mp, sets = h['fn']()
        path = os.path.join(dst, 'model.onnx')
        onnx.save(mp, path)
        inits = {t.name for t in mp.graph.initializer}
        gin = [i.name for i in mp.graph.input if i.name not in inits]
        job = dict(name=h['name'], model=path, sets=[])
        for k, s in enumerate(sets):
            d = os.path.join(dst, 'test_data_set_%d' % k)
            os.makedirs(d)
            ins = []
            for j, (gname, a) in enumerate(zip(gin, s)):
                with open(os.path.join(d, 'input_%d.pb' % j), 'wb') as f:
                    f.write(numpy_helper.from_array(a, gname).SerializeToString())
                raw = os.path.join(tmp, '%s_%d_%d.bin' % (h['name'], k, j))
                a.tofile(raw)
                ins.append(dict(name=gname, type=NP_TO_ORT[a.dtype.type], dims=list(a.shape), file=raw))
            job['sets'].append(dict(inputs=ins, outdir=os.path.join(tmp, '%s_%d' % (h['name'], k))))
        jobs.append(job)
        outs.append((dst, [o.name for o in mp.graph.output]))
    ort_outputs(jobs, tmp)
    for job, (dst, names) in zip(jobs, outs):
        write_outputs(job, names, dst)
        print('%s: %s' % (os.path.basename(dst), contrib_ops(job['model'])))
    write_manifest()
    shutil.rmtree(tmp)


def write_manifest():
    tol = source_tolerances()
    rows = []
    for src in OPTIMIZED:
        name = src + '_ortopt'
        if os.path.isdir(os.path.join(HERE, name)):
            r, a = tol.get(src, (1e-3, 1e-7))
            rows.append((name, r, a, 'ONNX Runtime\'s optimized %s: %s' % (src, contrib_ops(os.path.join(HERE, name, 'model.onnx')))))
    for h in HAND:
        if os.path.isdir(os.path.join(HERE, h['name'])):
            rows.append((h['name'], 1e-3, 1e-6, h['note']))
    with open(os.path.join(HERE, 'MANIFEST.tsv'), 'w') as f:
        f.write('test_name\trtol\tatol\tdescription\n')
        for r in rows:
            f.write('%s\t%g\t%g\t%s\n' % r)


if __name__ == '__main__':
    main()
