#!/usr/bin/python3
"""Builds the ai.onnx.ml node tests in this folder: one node each, the operators scikit-learn's converter
(skl2onnx) writes for linear models and preprocessing, with seeded inputs; the reference outputs come from
ONNX Runtime (npm onnxruntime-node, through ../../../../../shared/bench/onnx/ort_run.js `run`).

usage: /usr/bin/python3 make_ml.py
env:   ORT_NODE_MODULE (default /tmp/ort/node_modules/onnxruntime-node)
       ORT_RUN (default: shared/bench/onnx/ort_run.js beside the worktree)
"""
import json
import os
import shutil
import subprocess
import tempfile

import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, '..', '..', '..', '..'))
ORT_RUN = os.environ.get('ORT_RUN', os.path.join(ROOT, '..', 'shared', 'bench', 'onnx', 'ort_run.js'))
ORT_MODULE = os.environ.get('ORT_NODE_MODULE', '/tmp/ort/node_modules/onnxruntime-node')
TYPES = {np.float32: (TensorProto.FLOAT, 'float32'), np.int64: (TensorProto.INT64, 'int64')}
rng = np.random.default_rng(21)


def R(*shape):
    return rng.standard_normal(shape).astype(np.float32)


CASES = []


def case(name, op, inputs, attrs, nout=1):
    CASES.append((name, op, inputs, attrs, nout))


X = R(5, 4)
case('linear_regressor_2targets', 'LinearRegressor', {'x': X}, {'coefficients': list(R(8)), 'intercepts': [0.5, -1.0], 'targets': 2})
case('linear_regressor', 'LinearRegressor', {'x': X}, {'coefficients': list(R(4))})
case('linear_classifier_softmax', 'LinearClassifier', {'x': X}, {'coefficients': list(R(12)), 'intercepts': list(R(3)), 'classlabels_ints': [3, 7, 9], 'post_transform': 'SOFTMAX'}, 2)
case('linear_classifier_multi', 'LinearClassifier', {'x': X}, {'coefficients': list(R(12)), 'intercepts': list(R(3)), 'classlabels_ints': [0, 1, 2]}, 2)
case('linear_classifier_binary_logistic', 'LinearClassifier', {'x': X}, {'coefficients': list(R(4)), 'intercepts': [0.1], 'classlabels_ints': [0, 1], 'post_transform': 'LOGISTIC'}, 2)
case('linear_classifier_binary', 'LinearClassifier', {'x': X}, {'coefficients': list(R(4)), 'intercepts': [0.1], 'classlabels_ints': [4, 8]}, 2)
case('linear_classifier_softmax_zero', 'LinearClassifier', {'x': X}, {'coefficients': list(R(8)), 'intercepts': list(R(2)), 'classlabels_ints': [1, 2], 'post_transform': 'SOFTMAX_ZERO'}, 2)
case('scaler', 'Scaler', {'x': X}, {'offset': list(R(4)), 'scale': list(R(4))})
case('scaler_single', 'Scaler', {'x': X}, {'offset': [0.3], 'scale': [2.0]})
Xz = X.copy()
Xz[2] = 0
case('normalizer_l1', 'Normalizer', {'x': Xz}, {'norm': 'L1'})
case('normalizer_l2', 'Normalizer', {'x': Xz}, {'norm': 'L2'})
Xn = X.copy()
Xn[1, 2] = np.nan
Xn[3, 0] = np.nan
Xn[4, 1] = -1.0
case('imputer_nan', 'Imputer', {'x': Xn}, {'imputed_value_floats': list(R(4)), 'replaced_value_float': float('nan')})
case('imputer_value', 'Imputer', {'x': Xn}, {'imputed_value_floats': [9.0], 'replaced_value_float': -1.0})
case('imputer_int64', 'Imputer', {'x': np.array([[1, -1, 3], [-1, 5, -1]], np.int64)}, {'imputed_value_int64s': [7, 8, 9], 'replaced_value_int64': -1})
case('one_hot_encoder_int64', 'OneHotEncoder', {'x': np.array([[1, 5, 3], [9, 1, 1]], np.int64)}, {'cats_int64s': [1, 3, 5], 'zeros': 1})
case('one_hot_encoder_float', 'OneHotEncoder', {'x': np.array([1, 5, 3, 2], np.float32)}, {'cats_int64s': [1, 2, 3, 5]})
XS, SV, CO = R(6, 3), list(R(12)), list(R(4))
for _kt, _kp in [('RBF', [0.5, 0.0, 3]), ('LINEAR', [0.0, 0.0, 0]), ('POLY', [0.3, 1.0, 3]), ('SIGMOID', [0.2, -0.1, 0])]:
    case('svm_regressor_' + _kt.lower(), 'SVMRegressor', {'x': XS}, {'kernel_type': _kt, 'kernel_params': _kp,
         'support_vectors': SV, 'coefficients': CO, 'rho': [0.25], 'n_supports': 4})
case('svm_regressor_one_class', 'SVMRegressor', {'x': XS}, {'kernel_type': 'RBF', 'kernel_params': [0.5, 0.0, 3],
     'support_vectors': SV, 'coefficients': CO, 'rho': [-0.1], 'n_supports': 4, 'one_class': 1})
XC = R(7, 3)
SVC3 = {'support_vectors': list(R(21)), 'vectors_per_class': [2, 3, 2], 'kernel_type': 'RBF', 'kernel_params': [0.4, 0.0, 3],
        'coefficients': list(R(14)), 'rho': list(R(3))}
PA, PB = list(-np.abs(R(3)) - 0.5), list(R(3) * 0.3)
case('svm_classifier_3_rbf', 'SVMClassifier', {'x': XC}, dict(SVC3, classlabels_ints=[5, 6, 7]), 2)
case('svm_classifier_3_rbf_proba', 'SVMClassifier', {'x': XC}, dict(SVC3, classlabels_ints=[5, 6, 7], prob_a=PA, prob_b=PB), 2)
case('svm_classifier_3_poly_softmax', 'SVMClassifier', {'x': XC}, dict(SVC3, kernel_type='POLY', kernel_params=[0.3, 1.0, 2],
     classlabels_ints=[0, 1, 2], post_transform='SOFTMAX'), 2)
SVC2 = {'support_vectors': list(R(15)), 'vectors_per_class': [3, 2], 'kernel_type': 'RBF', 'kernel_params': [0.4, 0.0, 3]}
case('svm_classifier_2_rbf', 'SVMClassifier', {'x': XC}, dict(SVC2, coefficients=list(R(5)), rho=[0.1], classlabels_ints=[0, 1]), 2)
case('svm_classifier_2_rbf_proba', 'SVMClassifier', {'x': XC}, dict(SVC2, coefficients=list(R(5)), rho=[0.1],
     classlabels_ints=[3, 9], prob_a=[-1.3], prob_b=[0.2]), 2)
case('svm_classifier_2_positive', 'SVMClassifier', {'x': XC}, dict(SVC2, coefficients=list(np.abs(R(5))), rho=[-0.3],
     classlabels_ints=[0, 1]), 2)
case('svm_classifier_2_logistic', 'SVMClassifier', {'x': XC}, dict(SVC2, coefficients=list(R(5)), rho=[0.1],
     classlabels_ints=[0, 1], post_transform='LOGISTIC'), 2)


def zipmap_model(work):
    """skl2onnx's multiclass LogisticRegression as it converts it by default: LinearClassifier (LOGISTIC), then
    Normalizer L1 (one-vs-rest probabilities), then ZipMap: outputs the label tensor and the sequence of maps from
    class to probability. ONNX Runtime's node binding returns no maps, so the expected maps are its probabilities
    from the same graph without the ZipMap, zipped here."""
    name = 'skl2onnx_logreg_zipmap'
    x = R(4, 3)
    labels = [10, 20, 30]
    coef, icpt = list(R(9)), list(R(3))

    def graph(zipmap):
        nodes = [helper.make_node('LinearClassifier', ['x'], ['label', 'scores'], domain='ai.onnx.ml', coefficients=coef,
                                  intercepts=icpt, classlabels_ints=labels, post_transform='LOGISTIC'),
                 helper.make_node('Normalizer', ['scores'], ['probs'], domain='ai.onnx.ml', norm='L1')]
        outs = [helper.make_tensor_value_info('label', TensorProto.INT64, [None])]
        if zipmap:
            nodes.append(helper.make_node('ZipMap', ['probs'], ['output_probability'], domain='ai.onnx.ml',
                                          classlabels_int64s=labels))
            mt = onnx.TypeProto()
            mt.map_type.key_type = TensorProto.INT64
            mt.map_type.value_type.CopyFrom(helper.make_tensor_type_proto(TensorProto.FLOAT, []))
            outs.append(helper.make_value_info('output_probability', helper.make_sequence_type_proto(mt)))
        else:
            outs.append(helper.make_tensor_value_info('probs', TensorProto.FLOAT, [None, 3]))
        g = helper.make_graph(nodes, name, [helper.make_tensor_value_info('x', TensorProto.FLOAT, [None, 3])], outs)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid('', 17), helper.make_opsetid('ai.onnx.ml', 1)])
        m.ir_version = 8
        return m

    d = os.path.join(HERE, 'test_ml_' + name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(os.path.join(d, 'test_data_set_0'))
    onnx.save(graph(True), os.path.join(d, 'model.onnx'))
    onnx.save_tensor(numpy_helper.from_array(x, 'x'), os.path.join(d, 'test_data_set_0', 'input_0.pb'))
    plain = os.path.join(work, name + '.onnx')
    onnx.save(graph(False), plain)
    f = os.path.join(work, name + '_0.bin')
    x.tofile(f)
    return {'name': name, 'model': plain, 'zipmap_dir': d, 'labels': labels,
            'sets': [{'inputs': [{'name': 'x', 'type': 'float32', 'dims': [4, 3], 'file': f}], 'outdir': os.path.join(work, name)}]}


def write_zipmap(job):
    outdir = job['sets'][0]['outdir']
    specs = json.load(open(os.path.join(outdir, 'outputs.json')))
    dt = {'float32': np.float32, 'int64': np.int64}
    label, probs = [np.fromfile(s['file'], dtype=dt[s['type']]).reshape(s['dims']) for s in specs]
    d = os.path.join(job['zipmap_dir'], 'test_data_set_0')
    onnx.save_tensor(numpy_helper.from_array(label, 'label'), os.path.join(d, 'output_0.pb'))
    maps = [helper.make_map('', TensorProto.INT64, job['labels'], helper.make_sequence(
        '', onnx.SequenceProto.TENSOR, [numpy_helper.from_array(np.array(p, np.float32)) for p in row])) for row in probs]
    seq = helper.make_sequence('output_probability', onnx.SequenceProto.MAP, maps)
    open(os.path.join(d, 'output_1.pb'), 'wb').write(seq.SerializeToString())


def build(work):
    jobs = []
    for name, op, inputs, attrs, nout in CASES:
        d = os.path.join(HERE, 'test_ml_' + name)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(os.path.join(d, 'test_data_set_0'))
        node = helper.make_node(op, list(inputs), ['y%d' % i for i in range(nout)], domain='ai.onnx.ml', **attrs)
        ins = [helper.make_tensor_value_info(k, TYPES[v.dtype.type][0], list(v.shape)) for k, v in inputs.items()]
        g = helper.make_graph([node], name, ins, [helper.make_empty_tensor_value_info('y%d' % i) for i in range(nout)])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid('', 17), helper.make_opsetid('ai.onnx.ml', 3)])
        m.ir_version = 8
        onnx.save(m, os.path.join(d, 'model.onnx'))
        specs = []
        for i, (k, v) in enumerate(inputs.items()):
            onnx.save_tensor(numpy_helper.from_array(v, k), os.path.join(d, 'test_data_set_0', 'input_%d.pb' % i))
            f = os.path.join(work, '%s_%d.bin' % (name, i))
            v.tofile(f)
            specs.append({'name': k, 'type': TYPES[v.dtype.type][1], 'dims': list(v.shape), 'file': f})
        jobs.append({'name': name, 'model': os.path.join(d, 'model.onnx'),
                     'sets': [{'inputs': specs, 'outdir': os.path.join(work, name)}]})
    return jobs


def main():
    with tempfile.TemporaryDirectory() as work:
        jobs = build(work)
        zm = zipmap_model(work)
        jf = os.path.join(work, 'jobs.json')
        json.dump(jobs + [zm], open(jf, 'w'))
        subprocess.run(['node', ORT_RUN, 'run', jf], check=True, env=dict(os.environ, ORT_NODE_MODULE=ORT_MODULE))
        write_zipmap(zm)
        dt = {'float32': np.float32, 'int64': np.int64}
        for j in jobs:
            outdir = j['sets'][0]['outdir']
            for k, spec in enumerate(json.load(open(os.path.join(outdir, 'outputs.json')))):
                a = np.fromfile(spec['file'], dtype=dt[spec['type']]).reshape(spec['dims'])
                onnx.save_tensor(numpy_helper.from_array(a, spec['name']),
                                 os.path.join(os.path.dirname(j['model']), 'test_data_set_0', 'output_%d.pb' % k))


if __name__ == '__main__':
    main()
