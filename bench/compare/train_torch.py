"""PyTorch version of the two Fashion-MNIST training recipes that Axle's Go examples run.

This script trains the same models as Axle's Go examples, which follow the TensorFlow
XLA tutorials, so the two can be timed in the same session. Run it with Debian's python,
where python3-torch and python3-numpy are installed:

    /usr/bin/python3 bench/compare/train_torch.py dense|cnn [--steps N] [--epochs N]
        [--threads 2] [--seed S] [--data DIR]

It prints progress every 100 steps (dense) or after each epoch (cnn). The last line
always has this form:
    test_accuracy=<x> steps=<n> train_seconds=<s> ms_per_step=<ms>
train_seconds is the sum of the wall times of the training steps only. Each step
covers gathering its batch from tensors already in memory, the forward and backward
passes and the optimizer update. Reading the files, evaluation and printing are not
counted. The first steps are included, so one-off warm-up costs count too.

Recipes:
  dense: Linear(784, 10) with PyTorch's default init (kaiming-uniform weights and
         uniform biases; Keras would use glorot weights and zero biases). Inputs are
         raw 0..255 float32 (not scaled). Loss is F.cross_entropy, the optimizer is
         Adam(lr=1e-3, eps=1e-7) (Keras' epsilon), the batch is 100 and the default
         is 1000 steps. Each epoch draws the batches in a fresh random order of the
         60000 training images, and that repeats. Test accuracy is over all 10000
         test images.
  cnn:   Inputs are x/256, NCHW. The model is
         Conv(1,32,3,same)-ReLU-Conv(32,32,3,valid)-ReLU-MaxPool2-Dropout(.25)-
         Conv(32,64,3,same)-ReLU-Conv(64,64,3,valid)-ReLU-MaxPool2-Dropout(.25)-
         Flatten(64*5*5)-Linear(1600,512)-ReLU-Dropout(.5)-Linear(512,10).
         Weights use xavier_uniform (Keras' glorot_uniform) and biases start at zero.
         Loss is cross-entropy, the optimizer is RMSprop(lr=1e-4, alpha=0.9, eps=1e-7)
         (Keras' rho and epsilon, with eps added outside the sqrt as in Keras >= 2.11),
         and the batch is 256. The default is 3 epochs. The last partial batch of each
         epoch is DROPPED, so every step is 256 images: 60000 // 256 = 234 steps per
         epoch (Keras would run 235, the last with 96 images). After each epoch it
         prints the mean training loss, the training accuracy (over that epoch's batches,
         with dropout on, as Keras reports it) and the test accuracy (dropout off).
  --steps N overrides the epoch count: training stops after N steps. --epochs N
  means N passes of full batches (600 steps per epoch for dense, 234 for cnn).

Thread pools stay passive, as in run.sh: OMP_WAIT_POLICY=passive and OMP_NUM_THREADS
are set before torch is imported (unless they are already set), and the script calls
torch.set_num_threads(--threads) and torch.set_num_interop_threads(1).
"""
import argparse
import gzip
import os
import sys
import time

DEFAULT_DATA = "/usr/share/datasets/fashion-mnist"

def parse_args():
    p = argparse.ArgumentParser(description="PyTorch peer for Axle's Fashion-MNIST training recipes")
    p.add_argument("recipe", choices=["dense", "cnn"])
    p.add_argument("--steps", type=int, default=None, help="training steps (overrides --epochs)")
    p.add_argument("--epochs", type=int, default=None, help="epochs of full batches")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--data", default=DEFAULT_DATA, help="directory holding the Fashion-MNIST IDX .gz files")
    return p.parse_args()

args = parse_args()
os.environ.setdefault("OMP_WAIT_POLICY", "passive")
os.environ.setdefault("OMP_NUM_THREADS", str(args.threads))
os.environ.setdefault("MKL_NUM_THREADS", str(args.threads))
os.environ.setdefault("OPENBLAS_NUM_THREADS", str(args.threads))

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

torch.set_num_threads(args.threads)
torch.set_num_interop_threads(1)

def read_idx(path, magic, ndim):
    if not os.path.exists(path):
        sys.exit(f"train_torch.py: {path} not found; install Debian's package dataset-fashion-mnist "
                 f"(apt-get install dataset-fashion-mnist) or pass --data DIR")
    with gzip.open(path, "rb") as f:
        buf = f.read()
    got = int.from_bytes(buf[0:4], "big")
    if got != magic:
        sys.exit(f"train_torch.py: {path}: IDX magic {got:#x}, want {magic:#x}")
    dims = [int.from_bytes(buf[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim)]
    return np.frombuffer(buf, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)

def load(data_dir):
    d = {}
    for split in ("train", "t10k"):
        x = read_idx(os.path.join(data_dir, f"{split}-images-idx3-ubyte.gz"), 0x803, 3)
        y = read_idx(os.path.join(data_dir, f"{split}-labels-idx1-ubyte.gz"), 0x801, 1)
        d[split] = (x, y)
    return d

class Batches:
    """Indices of shuffled full batches: a fresh permutation every epoch, partial batch dropped."""
    def __init__(self, n, batch, rng):
        self.n, self.batch, self.rng = n, batch, rng
        self.per_epoch = n // batch
        self.perm, self.i = None, self.per_epoch
    def next(self):
        if self.i == self.per_epoch:
            self.perm = torch.from_numpy(self.rng.permutation(self.n))
            self.i = 0
        idx = self.perm[self.i * self.batch:(self.i + 1) * self.batch]
        self.i += 1
        return idx

def accuracy(model, x, y, chunk=1000):
    model.eval()
    correct = 0
    with torch.no_grad():
        for i in range(0, x.shape[0], chunk):
            correct += (model(x[i:i + chunk]).argmax(1) == y[i:i + chunk]).sum().item()
    model.train()
    return correct / x.shape[0]

def cnn_model():
    m = nn.Sequential(
        nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(),    # 28 -> 28
        nn.Conv2d(32, 32, 3), nn.ReLU(),              # 28 -> 26
        nn.MaxPool2d(2), nn.Dropout(0.25),            # 26 -> 13
        nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(),   # 13 -> 13
        nn.Conv2d(64, 64, 3), nn.ReLU(),              # 13 -> 11
        nn.MaxPool2d(2), nn.Dropout(0.25),            # 11 -> 5
        nn.Flatten(),                                 # 64*5*5 = 1600
        nn.Linear(64 * 5 * 5, 512), nn.ReLU(), nn.Dropout(0.5),
        nn.Linear(512, 10),
    )
    for mod in m.modules():
        if isinstance(mod, (nn.Conv2d, nn.Linear)):
            nn.init.xavier_uniform_(mod.weight)
            nn.init.zeros_(mod.bias)
    return m

def main():
    torch.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    data = load(args.data)
    (xtr, ytr), (xte, yte) = data["train"], data["t10k"]
    ytr = torch.from_numpy(ytr.astype(np.int64))
    yte = torch.from_numpy(yte.astype(np.int64))

    if args.recipe == "dense":
        xtr = torch.from_numpy(xtr.reshape(-1, 784).astype(np.float32))  # raw 0..255
        xte = torch.from_numpy(xte.reshape(-1, 784).astype(np.float32))
        model = nn.Linear(784, 10)  # PyTorch default init
        opt = torch.optim.Adam(model.parameters(), lr=1e-3, eps=1e-7)
        batch, default_steps = 100, 1000
    else:
        xtr = torch.from_numpy(xtr.reshape(-1, 1, 28, 28).astype(np.float32) / 256)
        xte = torch.from_numpy(xte.reshape(-1, 1, 28, 28).astype(np.float32) / 256)
        model = cnn_model()
        opt = torch.optim.RMSprop(model.parameters(), lr=1e-4, alpha=0.9, eps=1e-7)
        batch = 256
        default_steps = 3 * (xtr.shape[0] // batch)

    batches = Batches(xtr.shape[0], batch, rng)
    if args.steps is not None:
        steps = args.steps
    elif args.epochs is not None:
        steps = args.epochs * batches.per_epoch
    else:
        steps = default_steps
    report_every = 100 if args.recipe == "dense" else batches.per_epoch
    print(f"{args.recipe}: {steps} steps of batch {batch} ({batches.per_epoch} full batches per epoch), "
          f"{args.threads} threads, torch {torch.__version__}", flush=True)

    model.train()
    train_seconds = 0.0
    loss_sum, correct, seen, n_in_window = 0.0, 0, 0, 0
    test_acc = None
    for step in range(1, steps + 1):
        t0 = time.perf_counter()
        idx = batches.next()
        x, y = xtr[idx], ytr[idx]
        logits = model(x)
        loss = F.cross_entropy(logits, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        train_seconds += time.perf_counter() - t0

        loss_sum += loss.item()
        correct += (logits.detach().argmax(1) == y).sum().item()
        seen += y.shape[0]
        n_in_window += 1
        if step % report_every == 0 or step == steps:
            if args.recipe == "dense":
                print(f"step {step}: loss={loss_sum / n_in_window:.4f} (mean of last {n_in_window} steps) "
                      f"train_accuracy={correct / seen:.4f}", flush=True)
            else:
                epoch = step / batches.per_epoch
                test_acc = accuracy(model, xte, yte)
                print(f"epoch {epoch:.2f} (step {step}): loss={loss_sum / n_in_window:.4f} "
                      f"train_accuracy={correct / seen:.4f} test_accuracy={test_acc:.4f} "
                      f"train_seconds_so_far={train_seconds:.2f}", flush=True)
            loss_sum, correct, seen, n_in_window = 0.0, 0, 0, 0

    if args.recipe == "dense":
        test_acc = accuracy(model, xte, yte)
    print(f"test_accuracy={test_acc:.4f} steps={steps} train_seconds={train_seconds:.3f} "
          f"ms_per_step={train_seconds * 1e3 / max(steps, 1):.3f}", flush=True)

if __name__ == "__main__":
    main()
