#!/usr/bin/env python3
"""Generates the oracle tables minifloat's tests compare against.

    /usr/bin/python3 gen_tables.py   # from this directory; writes decode.tsv
                                     # and encode.tsv.gz (same bytes every run)

Only the Python standard library is used (the machine this was written on
had neither ml_dtypes nor numpy nor torch), so this is an independent
re-implementation from the format definitions, deliberately unlike the Go
code: values are exact rationals (fractions.Fraction), decoding follows the
written definition of each format, and encoding rounds |x| to the nearest
multiple of the format's spacing at |x| (ties to the even multiple) and then
looks the rounded value up in the decode table. The special results (NaN,
infinity, overflow, zero) are spelled out per format as literal bit patterns,
read from ml_dtypes' float8.h / mxfloat.h (quiet_NaN(), infinity(),
operator-) and Eigen's half / bfloat16.

f16 encodings are also checked against Python's own IEEE half packing
(struct format 'e'), a second oracle, wherever it does not overflow.

Formats with no executable oracle here (all but f16) rest on the format
definitions below; the rules that are ml_dtypes conventions rather than
arithmetic are commented where they appear.

Output (tab-separated):
  decode.tsv: format, first bit pattern (hex), count, value: the patterns
              first .. first+count-1 have the values N*2^K, (N+1)*2^K, ...
              for value NpK (or -NpK), or are all inf / -inf / nan / -nan
              (NaN payloads are not the oracle's concern)
  encode.tsv.gz: format, input as float64 bits (hex), expected bit pattern (hex)
"""

import gzip
import io
import math
import random
import struct
from fractions import Fraction

# name: (has sign bit, exponent bits, mantissa bits, exponent bias, kind)
# kind: ieee = IEEE 754 style (infinities, NaN = exponent all ones with a
#              non-zero mantissa);
#       fn   = no infinities, NaN only when every non-sign bit is 1;
#       fnuz = no infinities, no negative zero, NaN only as 0b1000...0;
#       e8m0 = unsigned, no zero, no subnormals, NaN = 0xff;
#       mx   = no infinities, no NaN (every pattern is a finite number).
FORMATS = {
    "f16": (1, 5, 10, 15, "ieee"),
    "bf16": (1, 8, 7, 127, "ieee"),
    "f8e4m3fn": (1, 4, 3, 7, "fn"),
    "f8e5m2": (1, 5, 2, 15, "ieee"),
    "f8e4m3fnuz": (1, 4, 3, 8, "fnuz"),
    "f8e5m2fnuz": (1, 5, 2, 16, "fnuz"),
    "f8e4m3b11fnuz": (1, 4, 3, 11, "fnuz"),
    "f8e3m4": (1, 3, 4, 3, "ieee"),
    "f8e4m3": (1, 4, 3, 7, "ieee"),
    "f8e8m0fnu": (0, 8, 0, 127, "e8m0"),
    "f4e2m1fn": (1, 2, 1, 1, "mx"),
    "f6e2m3fn": (1, 2, 3, 1, "mx"),
    "f6e3m2fn": (1, 3, 2, 3, "mx"),
}

# What NaN, +-infinity and +-zero inputs become, and what a finite value
# too large for the format becomes (ml_dtypes returns infinity() with the
# input's sign; for finite-only formats infinity() is their NaN, for
# f4e2m1fn it is the largest value). Quiet NaN is the pattern with the
# first mantissa bit set; a negative NaN is operator- of it.
SPECIAL = {
    #                 nan     -nan    inf     -inf    +0   -0
    "f16":           (0x7E00, 0xFE00, 0x7C00, 0xFC00, 0x0, 0x8000),
    "bf16":          (0x7FC0, 0xFFC0, 0x7F80, 0xFF80, 0x0, 0x8000),
    "f8e4m3fn":      (0x7F, 0xFF, 0x7F, 0xFF, 0x0, 0x80),
    "f8e5m2":        (0x7E, 0xFE, 0x7C, 0xFC, 0x0, 0x80),
    # fnuz: operator- leaves 0x00 and 0x80 alone, so -0 is +0 and every
    # NaN is 0x80.
    "f8e4m3fnuz":    (0x80, 0x80, 0x80, 0x80, 0x0, 0x0),
    "f8e5m2fnuz":    (0x80, 0x80, 0x80, 0x80, 0x0, 0x0),
    "f8e4m3b11fnuz": (0x80, 0x80, 0x80, 0x80, 0x0, 0x0),
    "f8e3m4":        (0x78, 0xF8, 0x70, 0xF0, 0x0, 0x80),
    "f8e4m3":        (0x7C, 0xFC, 0x78, 0xF8, 0x0, 0x80),
    # e8m0fnu: no zero and no negatives, so zero, negatives and every
    # special become NaN (0xff); operator- of anything is 0xff.
    "f8e8m0fnu":     (0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF),
    # f4e2m1fn: quiet_NaN() is 0b1000 (-0); operator- flips bit 3.
    "f4e2m1fn":      (0x8, 0x0, 0x7, 0xF, 0x0, 0x8),
    # The 6-bit mx formats follow the same template (mxfloat.h): NaN is
    # the sign bit alone, infinity the largest value.
    "f6e2m3fn":      (0x20, 0x0, 0x1F, 0x3F, 0x0, 0x20),
    "f6e3m2fn":      (0x20, 0x0, 0x1F, 0x3F, 0x0, 0x20),
}


def width(name):
    s, e, m, _, _ = FORMATS[name]
    return s + e + m


def decode(name, bits):
    """Returns ('nan', sign) or ('num', sign, Fraction) or ('inf', sign)."""
    s, e, m, bias, kind = FORMATS[name]
    sign = (bits >> (e + m)) & 1 if s else 0
    ef = (bits >> m) & ((1 << e) - 1)
    mf = bits & ((1 << m) - 1)
    allones = (1 << e) - 1
    if kind == "ieee" and ef == allones:
        return ("inf", sign) if mf == 0 else ("nan", sign)
    if kind == "fn" and ef == allones and mf == (1 << m) - 1:
        return ("nan", sign)
    if kind == "fnuz" and sign == 1 and ef == 0 and mf == 0:
        return ("nan", 1)
    if kind == "e8m0":
        if bits == 0xFF:
            return ("nan", 0)
        return ("num", 0, Fraction(2) ** (ef - bias))
    if ef == 0:
        v = Fraction(mf, 1 << m) * Fraction(2) ** (1 - bias)
    else:
        v = (1 + Fraction(mf, 1 << m)) * Fraction(2) ** (ef - bias)
    return ("num", sign, v)


def f64_bits(x):
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def f64_from_bits(b):
    return struct.unpack("<d", struct.pack("<Q", b))[0]


def pow2_form(v, name):
    """Writes v as "NpK", meaning N * 2^K, with N the integer significand in
    the format (so consecutive patterns differ by one in N: short, exact)."""
    if v == 0:
        return "0p0"
    _, _, m, bias, kind = FORMATS[name]
    emin = -bias if kind == "e8m0" else 1 - bias  # e8m0 has no subnormals
    k = max(floor_log2(v), emin) - m
    n = v / Fraction(2) ** k
    assert n.denominator == 1
    return "%dp%d" % (n.numerator, k)


def decode_runs(name):
    """Yields (first pattern, count, value of the first) for runs of
    consecutive patterns whose values go up by one step of the same size
    (NpK, (N+1)pK, ...) or are all NaN, so the whole table stays small."""
    run = None
    for b in range(1 << width(name)):
        d = decode(name, b)
        if d[0] == "nan":
            key = ("-nan" if d[1] else "nan", None, None)
        elif d[0] == "inf":
            key = ("-inf" if d[1] else "inf", None, None)
        else:
            text = pow2_form(d[2], name)
            n, k = (int(p) for p in text.split("p"))
            key = ("-" if d[1] else "", n, k)
        if run is not None:
            first, count, (rs, rn, rk) = run
            s, n, k = key
            if s == rs and (n is None and s in ("nan", "-nan") or
                            n is not None and rn is not None and k == rk and n == rn + count):
                run = (first, count + 1, run[2])
                continue
            yield emit(run)
        run = (b, 1, key)
    yield emit(run)


def emit(run):
    first, count, (s, n, k) = run
    if n is None:
        return first, count, s
    return first, count, "%s%dp%d" % (s, n, k)


def floor_log2(a):
    e = a.numerator.bit_length() - a.denominator.bit_length()
    while Fraction(2) ** e > a:
        e -= 1
    while Fraction(2) ** (e + 1) <= a:
        e += 1
    return e


class Table:
    def __init__(self, name):
        self.name = name
        self.by_value = {}  # (sign, Fraction) -> bits
        self.finite = []  # positive finite values, ascending
        for b in range(1 << width(name)):
            d = decode(name, b)
            if d[0] == "num":
                self.by_value.setdefault((d[1], d[2]), b)
                if d[1] == 0:
                    self.finite.append(d[2])
        self.finite.sort()
        self.max = self.finite[-1]

    def encode(self, x):
        """Expected bits for the float64 x."""
        nan, nnan, inf, ninf, zero, nzero = SPECIAL[self.name]
        s, e, m, bias, kind = FORMATS[self.name]
        if math.isnan(x):
            return nnan if math.copysign(1, x) < 0 else nan
        if math.isinf(x):
            return ninf if x < 0 else inf
        neg = math.copysign(1, x) < 0
        if x == 0:
            return nzero if neg else zero
        if kind == "e8m0" and neg:
            return nan
        a = abs(Fraction(x))
        # Round |x| to the nearest multiple of the spacing at |x|: that of
        # |x|'s binade, or of the subnormal range below the smallest normal
        # exponent 1 - bias. Ties go to the even multiple.
        q = Fraction(2) ** (max(floor_log2(a), 1 - bias) - m)
        r = a / q
        n = math.floor(r)
        if r - n > Fraction(1, 2) or (r - n == Fraction(1, 2) and n % 2 == 1):
            n += 1
        v = n * q
        if v > self.max:
            return ninf if neg else inf
        if v == 0:
            if kind == "e8m0":
                # ml_dtypes quirk: e8m0 rounds tiny values on a grid whose
                # zero step lands on pattern 0x00, which is 2^-127.
                return 0x00
            return nzero if neg else zero
        return self.by_value[(1 if neg else 0, v)]


def encode_inputs(t, rng):
    """Doubles that probe every rounding decision of format t."""
    vals = t.finite
    xs = [0.0, -0.0, math.inf, -math.inf, math.nan, -math.nan,
          5e-324, -5e-324, 1e-300, 1e300, -1e300, 2.0 ** 1023]
    big = len(vals) > 1000
    idx = range(len(vals) - 1)
    if big:  # 16-bit formats: the ends of the range and a random sample
        idx = sorted(set(list(range(200)) + list(range(len(vals) - 201, len(vals) - 1)) +
                     rng.sample(range(len(vals) - 1), 600)))
    for i in idx:
        lo, hi = vals[i], vals[i + 1]
        mid = float((lo + hi) / 2)  # exact: a tie (every format fits in f64)
        xs += [float(lo), mid, math.nextafter(mid, 0), math.nextafter(mid, math.inf)]
    mx = t.max
    # Beyond the largest value: where the next step would be, and around the
    # tie between the largest value and that step.
    step = mx - vals[-2] if vals[-2] * 2 != mx else mx
    for v in [mx, mx + step / 2, mx + step, 2 * mx, mx * 1000]:
        f = float(v)
        xs += [f, math.nextafter(f, 0), math.nextafter(f, math.inf)]
    lo = vals[0] if vals[0] != 0 else vals[1]
    for v in [lo / 2, lo / 4, lo * 3 / 4, lo * 3 / 2]:
        f = float(v)
        xs += [f, math.nextafter(f, 0), math.nextafter(f, math.inf)]
    for _ in range(150):
        xs.append(rng.uniform(1, 2) * 2.0 ** rng.randint(-140, 130))
    # Both signs of everything.
    return xs + [-x for x in xs]


def gzopen(path):
    raw = gzip.GzipFile(path, "wb", mtime=0)
    return io.TextIOWrapper(raw, encoding="ascii", newline="\n")


def main():
    rng = random.Random(20240917)
    # mtime=0 keeps the files byte-identical from run to run.
    with open("decode.tsv", "w", newline="\n") as dec, gzopen("encode.tsv.gz") as enc:
        dec.write("format\tfirst\tcount\tvalue\n")
        enc.write("format\tinput\tbits\n")
        for name in FORMATS:
            t = Table(name)
            for first, count, v in decode_runs(name):
                dec.write("%s\t%x\t%d\t%s\n" % (name, first, count, v))
            seen = set()
            for x in encode_inputs(t, rng):
                key = f64_bits(x)
                if key in seen:
                    continue
                seen.add(key)
                want = t.encode(x)
                if name == "f16" and math.isfinite(x):
                    try:
                        got = struct.unpack("<H", struct.pack("<e", x))[0]
                    except OverflowError:
                        got = None
                    if got is not None:
                        assert got == want, (x, hex(got), hex(want))
                enc.write("%s\t%016x\t%x\n" % (name, key, want))


if __name__ == "__main__":
    main()
