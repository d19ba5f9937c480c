#!/usr/bin/python3
"""Real-size architectures beside ONNX Runtime: models to time with run.sh, at the sizes users run.

usage: /usr/bin/python3 bench/onnx/realsize.py OUT_DIR [ORT_MODULE]
       ROUNDS=3 bench/onnx/run.sh ORT_MODULE OUT_DIR

Writes under OUT_DIR (about 650 MB, so outside the repository) one ONNX backend-test folder per model:
MobileNetV2 (width 1, 224x224), ViT-S/16 (224x224, 6 blocks, torch's MultiheadAttention), a 6-layer
BERT-base-width encoder (768 wide, 128 tokens, a padding mask), a YOLO-style head at 320x320 with its
TopK post-processing, a HiFi-GAN V1 vocoder (80 mels x 32 frames to 8192 samples: 1-D ConvTransposes
of stride 8, 8, 2, 2 and dilated residual blocks, as Piper's and Coqui's TTS models end), a U-Net
decoder stage (3x3 stride-2 ConvTranspose at 56x56x64, then convolutions), and fp16 conversions of
the first three and the vocoder as onnxconverter-common writes them
(to_float16 of onnx/onnxtest/testdata/models/make_models.py: float32 inputs and outputs, float16
inside). Weights are seeded random (torch 1.13's initialisers, batch-norm statistics drawn), exported
by torch.onnx at opset 17; each folder's test_data_set_0 holds the inputs and ONNX Runtime's outputs
(npm onnxruntime-node through ../../../shared/bench/onnx/ort_run.js `run`), and OUT_DIR/MANIFEST.tsv
the fp16 tolerances (rtol 5e-3, atol 4e-3, as the fp16 models of testdata/models), so
`axle onnx-test OUT_DIR` checks them too.
"""
import os, sys, json, shutil, subprocess, tempfile
import numpy as np, onnx, torch, torch.nn as nn
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', '..', 'onnx', 'onnxtest', 'testdata', 'models'))
from make_models import to_float16  # noqa: E402

out = sys.argv[1]
ortmod = sys.argv[2] if len(sys.argv) > 2 else '/tmp/ort/node_modules/onnxruntime-node'
torch.manual_seed(0)


def save(name, model, inputs, names, opset=17):
    d = os.path.join(out, name)
    os.makedirs(d, exist_ok=True)
    torch.onnx.export(model.eval(), tuple(inputs), os.path.join(d, 'model.onnx'), input_names=names, opset_version=opset)
    np.savez(os.path.join(out, name + '.npz'), **{n: i.numpy() for n, i in zip(names, inputs)})


class InvRes(nn.Module):
    def __init__(s, i, o, stride, t):
        super().__init__(); h = i * t; s.use = stride == 1 and i == o
        layers = [] if t == 1 else [nn.Conv2d(i, h, 1, bias=False), nn.BatchNorm2d(h), nn.ReLU6()]
        layers += [nn.Conv2d(h, h, 3, stride, 1, groups=h, bias=False), nn.BatchNorm2d(h), nn.ReLU6(), nn.Conv2d(h, o, 1, bias=False), nn.BatchNorm2d(o)]
        s.b = nn.Sequential(*layers)
    def forward(s, x): return x + s.b(x) if s.use else s.b(x)

class MobileNetV2(nn.Module):
    def __init__(s):
        super().__init__()
        cfg = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]
        layers = [nn.Conv2d(3, 32, 3, 2, 1, bias=False), nn.BatchNorm2d(32), nn.ReLU6()]
        c = 32
        for t, o, n, st in cfg:
            for k in range(n):
                layers.append(InvRes(c, o, st if k == 0 else 1, t)); c = o
        layers += [nn.Conv2d(c, 1280, 1, bias=False), nn.BatchNorm2d(1280), nn.ReLU6()]
        s.f = nn.Sequential(*layers); s.fc = nn.Linear(1280, 1000)
        for m in s.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.running_mean.uniform_(-0.1, 0.1); m.running_var.uniform_(0.5, 1.5)
    def forward(s, x): return s.fc(s.f(x).mean((2, 3)))

class Block(nn.Module):
    def __init__(s, d, h):
        super().__init__(); s.n1 = nn.LayerNorm(d); s.a = nn.MultiheadAttention(d, h, batch_first=True); s.n2 = nn.LayerNorm(d)
        s.m = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))
    def forward(s, x):
        y = s.n1(x); x = x + s.a(y, y, y, need_weights=False)[0]
        return x + s.m(s.n2(x))

class ViT(nn.Module):
    def __init__(s, d=384, depth=6, heads=6):
        super().__init__(); s.p = nn.Conv2d(3, d, 16, 16); s.cls = nn.Parameter(torch.randn(1, 1, d) * .02)
        s.pos = nn.Parameter(torch.randn(1, 197, d) * .02); s.b = nn.Sequential(*[Block(d, heads) for _ in range(depth)])
        s.n = nn.LayerNorm(d); s.h = nn.Linear(d, 1000)
    def forward(s, x):
        x = s.p(x).flatten(2).transpose(1, 2)
        x = torch.cat([s.cls.expand(x.shape[0], -1, -1), x], 1) + s.pos
        return s.h(s.n(s.b(x))[:, 0])

class Bert(nn.Module):
    def __init__(s, d=768, depth=6, heads=12, vocab=30522):
        super().__init__(); s.e = nn.Embedding(vocab, d); s.pe = nn.Embedding(512, d); s.n = nn.LayerNorm(d)
        s.l = nn.ModuleList([nn.TransformerEncoderLayer(d, heads, 4 * d, 0.0, activation='gelu', batch_first=True) for _ in range(depth)])
    def forward(s, ids, mask):
        x = s.n(s.e(ids) + s.pe(torch.arange(ids.shape[1]).unsqueeze(0)))
        for l in s.l:
            x = l(x, src_key_padding_mask=mask == 0)
        return x

class Yolo(nn.Module):
    def __init__(s):
        super().__init__()
        def cbs(i, o, st): return nn.Sequential(nn.Conv2d(i, o, 3, st, 1), nn.SiLU())
        s.b = nn.Sequential(cbs(3, 32, 2), cbs(32, 64, 2), cbs(64, 64, 1), cbs(64, 128, 2), cbs(128, 128, 1), cbs(128, 256, 2), cbs(256, 256, 1))
        s.h = nn.Conv2d(256, 3 * 85, 1)
    def forward(s, x):
        p = s.h(s.b(x)); b = p.shape[0]
        p = p.view(b, 3, 85, -1).permute(0, 1, 3, 2).reshape(b, -1, 85).sigmoid()
        score = p[..., 4:5] * p[..., 5:]
        best, cls = score.max(-1)
        top, idx = best.topk(100, dim=1)
        boxes = torch.gather(p[..., :4], 1, idx.unsqueeze(-1).expand(-1, -1, 4))
        return top, torch.gather(cls, 1, idx), boxes


class ResBlock(nn.Module):
    def __init__(s, ch, k, dil):
        super().__init__()
        s.c1 = nn.ModuleList([nn.Conv1d(ch, ch, k, 1, dilation=d, padding=(k * d - d) // 2) for d in dil])
        s.c2 = nn.ModuleList([nn.Conv1d(ch, ch, k, 1, padding=(k - 1) // 2) for _ in dil])
    def forward(s, x):
        for a, b in zip(s.c1, s.c2):
            x = x + b(nn.functional.leaky_relu(a(nn.functional.leaky_relu(x, 0.1)), 0.1))
        return x

class HiFiGAN(nn.Module):
    """HiFi-GAN V1's generator (weight norm folded): 512 channels, upsampling 8, 8, 2, 2 with kernels
    16, 16, 4, 4, residual blocks of kernels 3, 7, 11 and dilations 1, 3, 5."""
    def __init__(s, ch=512, rates=(8, 8, 2, 2), ks=(16, 16, 4, 4), rk=(3, 7, 11)):
        super().__init__(); s.pre = nn.Conv1d(80, ch, 7, 1, padding=3)
        s.ups = nn.ModuleList(); s.res = nn.ModuleList(); s.n = len(rk)
        for i, (u, k) in enumerate(zip(rates, ks)):
            c = ch // 2 ** (i + 1)
            s.ups.append(nn.ConvTranspose1d(2 * c, c, k, u, padding=(k - u) // 2))
            s.res.extend(ResBlock(c, kk, (1, 3, 5)) for kk in rk)
        s.post = nn.Conv1d(c, 1, 7, 1, padding=3)
    def forward(s, x):
        x = s.pre(x)
        for i, up in enumerate(s.ups):
            x = up(nn.functional.leaky_relu(x, 0.1))
            x = sum(s.res[i * s.n + j](x) for j in range(s.n)) / s.n
        return torch.tanh(s.post(nn.functional.leaky_relu(x)))

class UNetUp(nn.Module):
    def __init__(s):
        super().__init__(); s.up = nn.ConvTranspose2d(64, 32, 3, 2, 1, 1)
        s.c = nn.Sequential(nn.ReLU(), nn.Conv2d(32, 32, 3, padding=1), nn.ReLU(), nn.Conv2d(32, 8, 1))
    def forward(s, x): return s.c(s.up(x))


x224 = torch.randn(1, 3, 224, 224)
save('mobilenetv2_224', MobileNetV2(), [x224], ['x'])
save('vit_s16_224', ViT(), [x224], ['x'])
ids = torch.randint(0, 30522, (1, 128))
mask = torch.ones(1, 128, dtype=torch.int64)
mask[0, 100:] = 0
save('bert_base6_128', Bert(), [ids, mask], ['ids', 'mask'])
save('yolo_320', Yolo(), [torch.randn(1, 3, 320, 320)], ['x'])
save('hifigan_v1_32f', HiFiGAN(), [torch.randn(1, 80, 32)], ['mel'])
save('unet_up_56', UNetUp(), [torch.randn(1, 64, 56, 56)], ['x'])
for name in ['mobilenetv2_224', 'vit_s16_224', 'bert_base6_128', 'hifigan_v1_32f']:
    mp = onnx.load(os.path.join(out, name, 'model.onnx'))
    d = os.path.join(out, 'f16_' + name)
    os.makedirs(d, exist_ok=True)
    onnx.save(to_float16(mp), os.path.join(d, 'model.onnx'))
    shutil.copy(os.path.join(out, name + '.npz'), os.path.join(out, 'f16_' + name + '.npz'))
with open(os.path.join(out, 'MANIFEST.tsv'), 'w') as f:
    f.write('test_name\topset\trtol\tatol\tdescription\n')
    f.write('bert_base6_128\t17\t0.001\t1e-05\tsummation order over 768-wide rows\n')
    f.write('hifigan_v1_32f\t17\t0.001\t0.0001\tsummation order over 512-channel windows\n')
    f.write('unet_up_56\t17\t0.001\t1e-05\tsummation order\n')
    for name in ['mobilenetv2_224', 'vit_s16_224', 'bert_base6_128', 'hifigan_v1_32f']:
        f.write('f16_%s\t17\t0.005\t0.004\tfloat16 inside\n' % name)



def write_test_data():
    """test_data_set_0 of every folder: the inputs, and ONNX Runtime's outputs."""
    types = {'float32': np.float32, 'int64': np.int64, 'float16': np.float16, 'bool': np.bool_}
    work, jobs = tempfile.mkdtemp(), []
    for name in sorted(os.listdir(out)):
        d = os.path.join(out, name)
        if not os.path.isfile(os.path.join(d, 'model.onnx')):
            continue
        z = np.load(d + '.npz')
        m = onnx.load(os.path.join(d, 'model.onnx'), load_external_data=False)
        inits = {i.name for i in m.graph.initializer}
        ts = os.path.join(d, 'test_data_set_0')
        os.makedirs(ts, exist_ok=True)
        specs = []
        for k, gi in enumerate(i for i in m.graph.input if i.name not in inits):
            a = np.ascontiguousarray(z[gi.name])
            with open(os.path.join(ts, 'input_%d.pb' % k), 'wb') as f:
                f.write(numpy_helper.from_array(a, gi.name).SerializeToString())
            raw = os.path.join(work, '%s_%d.bin' % (name, k))
            a.tofile(raw)
            specs.append({'name': gi.name, 'type': str(a.dtype), 'dims': list(a.shape), 'file': raw})
        od = os.path.join(work, name)
        os.makedirs(od)
        jobs.append({'name': name, 'model': os.path.join(d, 'model.onnx'), 'sets': [{'inputs': specs, 'outdir': od}]})
    jf = os.path.join(work, 'jobs.json')
    json.dump(jobs, open(jf, 'w'))
    ort_run = os.path.join(HERE, '..', '..', '..', 'shared', 'bench', 'onnx', 'ort_run.js')
    subprocess.run(['node', ort_run, 'run', jf], check=True, env=dict(os.environ, ORT_NODE_MODULE=ortmod))
    for j in jobs:
        od, ts = j['sets'][0]['outdir'], os.path.join(os.path.dirname(j['model']), 'test_data_set_0')
        for k, o in enumerate(json.load(open(os.path.join(od, 'outputs.json')))):
            a = np.fromfile(o['file'], dtype=types[o['type']]).reshape(o['dims'])
            with open(os.path.join(ts, 'output_%d.pb' % k), 'wb') as f:
                f.write(numpy_helper.from_array(a, o['name']).SerializeToString())
        print(j['name'], 'ok')
    shutil.rmtree(work)


write_test_data()
