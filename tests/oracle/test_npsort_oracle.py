#!/usr/bin/env python3
"""test_npsort_oracle.py - the installed NumPy's np.argsort against the
library's detfeed_numpy_argsort, permutation for permutation.

    python3 tests/oracle/test_npsort_oracle.py --lib build/libdetfeed.so
    python3 tests/oracle/test_npsort_oracle.py --save answers.npz
    python3 tests/oracle/test_npsort_oracle.py --lib build/libdetfeed.so --replay answers.npz

The first form sorts every case with this NumPy and with the library's
variant that detfeed.stack.numpy_sort detects (or --variant) and prints,
per dtype, how many arrays it compared and how many permutations differ.
--save needs no library: it writes this NumPy's answers (the keys and the
permutations, with the NumPy version and CPU) to a file, which --replay
compares with a library elsewhere.

The cases, for int32, uint32, int64, uint64, float32 and float64 keys: every
n from 0 to 300 and larger ones up to 4096 (one 100000), each with few
distinct values (ties), a 90% majority of the smallest value (x86-simd-sort
then gives up its quicksort for std::sort) or of the largest, -0.0 beside
0.0 and the dtype's extremes, NaN and infinities, sorted, reversed and
distinct keys; and two adversaries that drive the introsorts into their
heapsort fallbacks (NumPy's own, libstdc++'s behind x86-simd-sort's NaN
path).

Exit 0 when no permutation differs, 1 when one does, 77 (skip) without
NumPy, under a sanitizer build (--no-ctypes) and when this NumPy runs none
of the variants (NumPy 1.25 or 1.26 on an AVX-512 CPU).
"""
import argparse
import os
import platform
import sys

SKIP = 77
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import oracle_util as ou  # noqa: E402

DTYPES = ("int32", "uint32", "int64", "uint64", "float32", "float64")
VARIANTS = ("scalar", "avx2", "avx512")
SIZES = list(range(0, 301)) + [400, 513, 777, 1000, 1024, 1500, 2000, 3000, 4096]
BIG = 100000
KINDS = ("few", "some", "zeros", "ones", "extremes", "nan", "sorted", "reversed",
         "distinct")


def make_keys(np, dtype, n, kind, seed):
    """The keys of one case (deterministic in its arguments)."""
    g = np.random.default_rng(seed)
    fl = dtype.startswith("float")
    if kind in ("few", "sorted", "reversed", "nan"):
        a = g.integers(0, max(2, n // 10 + 1), n).astype(dtype)
        if kind == "sorted":
            a.sort()
        elif kind == "reversed":
            a = np.sort(a)[::-1].copy()
        elif kind == "nan" and fl:
            a[g.random(n) < 0.05] = np.nan
            a[g.random(n) < 0.05] = np.inf
        return a
    if kind == "some":
        return g.integers(0, max(2, n // 3 + 1), n).astype(dtype)
    if kind in ("zeros", "ones"):
        rare = (g.random(n) < 0.1).astype(dtype) * g.integers(1, 5, n).astype(dtype)
        return rare if kind == "zeros" else (4 - rare).astype(dtype)
    if kind == "extremes":
        if fl:
            pool = np.array([-0.0, 0.0, 1.0, -1.0, np.inf, -np.inf], dtype)
        else:
            i = np.iinfo(dtype)
            pool = np.array([i.min, i.max, 0, 1], dtype)
        return g.choice(pool, n)
    return g.permutation(n).astype(dtype)


def cases(np):
    """(dtype, label, keys) of every generated case."""
    for t, dtype in enumerate(DTYPES):
        for n in SIZES:
            for k, kind in enumerate(KINDS):
                yield dtype, "%s n=%d" % (kind, n), make_keys(
                    np, dtype, n, kind, (t * 100 + k) * 100003 + n)
        for kind in ("few", "zeros", "nan"):
            yield dtype, "%s n=%d" % (kind, BIG), make_keys(np, dtype, BIG, kind, t * 7 + 1)


# ---- adversaries ------------------------------------------------------------


class _Gas:
    """McIlroy's adversary ("A killer adversary for quicksort", 1999): every
    key is gas until a comparison of two gas keys freezes one of them to the
    next value, so the sort under attack chooses bad pivots throughout. The
    keys frozen by the end (the rest last) make an input that drives the
    same sort into its worst case, here its heapsort fallback. Index `nan`
    stands for a NaN: larger than everything, never frozen."""

    def __init__(self, n, nan=None):
        self.n, self.nan = n, nan
        self.val = [None] * n
        self.solid, self.candidate = 0, 0

    def gas(self, x):
        return self.val[x] is None and x != self.nan

    def rank(self, x):
        """Solid values first, then gas, then the NaN."""
        return (2, 0) if x == self.nan else (1, 0) if self.val[x] is None else (0, self.val[x])

    def less(self, x, y):
        if self.gas(x) and self.gas(y):
            z = x if x == self.candidate else y
            self.val[z], self.solid = self.solid, self.solid + 1
        if self.gas(x):
            self.candidate = x
        elif self.gas(y):
            self.candidate = y
        return self.rank(x) < self.rank(y)

    def keys(self):
        return [self.n if x is None else x for x in self.val]


def numpy_killer(np, n):
    """Keys on which NumPy's own introsort (npysort's quicksort) reaches its
    heapsort fallback: the adversary plays against np.argsort of an object
    array, which runs the same partitioning through Python comparisons."""
    gas = _Gas(n)

    class Key:
        __slots__ = ("i",)

        def __init__(self, i):
            self.i = i

        def __lt__(self, other):
            return gas.less(self.i, other.i)

    a = np.empty(n, object)
    for i in range(n):
        a[i] = Key(i)
    np.argsort(a, kind="quicksort")
    return gas.keys()


def _std_sort(a, less):
    """libstdc++'s std::sort of the list a (introsort: median of first + 1,
    middle and last - 1 moved to first, unguarded partition, heapsort past
    2 floor(log2 n) levels, then one insertion sort), for the adversary."""
    def swap(i, j):
        a[i], a[j] = a[j], a[i]

    def median_to_first(r, x, y, z):
        if less(a[x], a[y]):
            swap(r, y if less(a[y], a[z]) else z if less(a[x], a[z]) else x)
        else:
            swap(r, x if less(a[x], a[z]) else z if less(a[y], a[z]) else y)

    def partition(first, last, pivot):
        while True:
            while less(a[first], a[pivot]):
                first += 1
            last -= 1
            while less(a[pivot], a[last]):
                last -= 1
            if not first < last:
                return first
            swap(first, last)
            first += 1

    def adjust(first, hole, length, value):
        top, child = hole, hole
        while child < (length - 1) // 2:
            child = 2 * (child + 1)
            if less(a[first + child], a[first + child - 1]):
                child -= 1
            a[first + hole] = a[first + child]
            hole = child
        if length % 2 == 0 and child == (length - 2) // 2:
            child = 2 * (child + 1)
            a[first + hole] = a[first + child - 1]
            hole = child - 1
        parent = (hole - 1) // 2
        while hole > top and less(a[first + parent], value):
            a[first + hole] = a[first + parent]
            hole, parent = parent, (parent - 1) // 2
        a[first + hole] = value

    def heapsort(first, last):
        length = last - first
        for parent in range((length - 2) // 2, -1, -1):
            adjust(first, parent, length, a[first + parent])
        while length > 1:
            length -= 1
            value = a[first + length]
            a[first + length] = a[first]
            adjust(first, 0, length, value)

    def intro(first, last, depth):
        while last - first > 16:
            if depth == 0:
                heapsort(first, last)
                return
            depth -= 1
            median_to_first(first, first + 1, first + (last - first) // 2, last - 1)
            cut = partition(first + 1, last, first)
            intro(cut, last, depth)
            last = cut

    def insert(i):
        v = a[i]
        while less(v, a[i - 1]):
            a[i] = a[i - 1]
            i -= 1
        a[i] = v

    n = len(a)
    if n > 1:
        intro(0, n, 2 * (n.bit_length() - 1))
        for i in range(1, min(n, 16)):
            if less(a[i], a[0]):
                a[:i + 1] = [a[i]] + a[:i]
            else:
                insert(i)
        for i in range(16, n):
            insert(i)


def std_killer(n):
    """Keys (the last a NaN, as None) on which libstdc++'s std::sort, which
    x86-simd-sort hands arrays with a NaN, reaches its heapsort fallback."""
    gas = _Gas(n, nan=n - 1)
    _std_sort(list(range(n)), gas.less)
    keys = gas.keys()
    keys[n - 1] = None
    return keys


def adversaries(np):
    """(dtype, label, keys) of the adversarial cases."""
    scalar = np.array(numpy_killer(np, 2000), np.int64)
    for dtype in DTYPES:
        yield dtype, "numpy-killer n=2000", scalar.astype(dtype)
    std = std_killer(2000)
    for dtype in ("float32", "float64"):
        yield dtype, "std-killer n=2000", np.array(
            [np.nan if k is None else k for k in std], dtype)


# ---- the comparison ---------------------------------------------------------


def cpu_features(np):
    """The SIMD extensions NumPy found on this CPU, as a short text."""
    try:
        from numpy._core._multiarray_umath import __cpu_features__ as f
    except ImportError:
        try:
            from numpy.core._multiarray_umath import __cpu_features__ as f
        except ImportError:
            return "unknown"
    names = ("AVX2", "FMA3", "AVX512F", "AVX512_SKX", "AVX512_ICL", "AVX512_SPR")
    return " ".join(n for n in names if f.get(n)) or "no AVX2"


class Tally:
    """Arrays compared and permutations differing, per dtype."""

    def __init__(self):
        self.seen = {d: 0 for d in DTYPES}
        self.bad = {d: 0 for d in DTYPES}
        self.largest = {d: 0 for d in DTYPES}
        self.examples = []

    def add(self, dtype, label, same):
        self.seen[dtype] += 1
        self.largest[dtype] = max(self.largest[dtype], int(label.split("n=")[1]))
        if not same:
            self.bad[dtype] += 1
            if len(self.examples) < 10:
                self.examples.append("%s %s" % (dtype, label))

    def report(self, head):
        print(head)
        for d in DTYPES:
            print("  %-8s %5d arrays (n up to %d): %d permutations differ"
                  % (d, self.seen[d], self.largest[d], self.bad[d]))
        for e in self.examples:
            print("  differs: %s" % e)
        total = sum(self.bad.values())
        print("%d of %d permutations differ" % (total, sum(self.seen.values())))
        return total


def check_digests(np, lib):
    """detfeed.stack's probe digests are the library's argsort of the probe."""
    from detfeed import stack
    ok = True
    for sort in VARIANTS:
        for dtype in ("uint64", "float32"):
            got = stack.permutation_digest(lib.numpy_argsort(stack.sort_probe(np, dtype), sort))
            ok &= stack._SORT_DIGESTS.get(got) == sort
    print("detfeed.stack's probe digests are the library's: %s" % ("yes" if ok else "NO"))
    return ok


def all_cases(np):
    yield from cases(np)
    yield from adversaries(np)


def compare(np, lib, sort, source):
    tally = Tally()
    for dtype, label, keys, want in source:
        tally.add(dtype, label, np.array_equal(lib.numpy_argsort(keys, sort), want))
    return tally


def live(np):
    for dtype, label, keys in all_cases(np):
        yield dtype, label, keys, np.argsort(keys)


def save(np, path, sort):
    out = {"numpy": np.array(np.__version__), "cpu": np.array(cpu_features(np)),
           "machine": np.array(platform.processor() or platform.machine()),
           "variant": np.array(sort or "none")}
    labels = []
    for i, (dtype, label, keys) in enumerate(all_cases(np)):
        out["k%d" % i] = keys
        out["r%d" % i] = np.argsort(keys).astype(np.int32)
        labels.append("%s|%s" % (dtype, label))
    out["labels"] = np.array(labels)
    np.savez_compressed(path, **out)
    print("saved %d cases of NumPy %s (%s; variant %s) to %s"
          % (len(labels), np.__version__, out["cpu"], out["variant"], path))


def replayed(np, path):
    z = np.load(path)
    for i, tag in enumerate(z["labels"].tolist()):
        dtype, label = tag.split("|")
        yield dtype, label, z["k%d" % i], z["r%d" % i]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lib", help="libdetfeed.so to check")
    ap.add_argument("--variant", choices=VARIANTS,
                    help="the library's variant to compare (default: the one "
                         "detfeed.stack.numpy_sort detects, or the saved file's)")
    ap.add_argument("--save", metavar="FILE", help="write this NumPy's answers (no library)")
    ap.add_argument("--replay", metavar="FILE", help="compare the library with saved answers")
    ap.add_argument("--expect-numpy", metavar="MAJOR", type=int,
                    help="skip (77) unless the imported NumPy is of this major version "
                         "(a wheel folder on PYTHONPATH that is missing)")
    ap.add_argument("--no-ctypes", action="store_true",
                    help="sanitizer build: the library cannot be loaded (skip)")
    args = ap.parse_args()
    (np,) = ou.require(("numpy",), "install python3-numpy")
    if args.expect_numpy is not None and int(np.__version__.split(".")[0]) != args.expect_numpy:
        print("SKIP: NumPy %s (%s) is not NumPy %d" % (np.__version__, np.__file__,
                                                     args.expect_numpy))
        return SKIP
    sys.path.insert(0, os.path.abspath(ou.PYTHON_DIR))
    from detfeed import stack
    detected = stack.numpy_sort(np)
    if args.save:
        save(np, args.save, detected)
        return 0
    if args.no_ctypes:
        print("SKIP: the checks go through ctypes, which a sanitizer build cannot serve")
        return SKIP
    if not args.lib:
        ap.error("--lib is needed (or --save)")
    lib = ou.capi().load(os.path.abspath(args.lib))
    if args.replay:
        z = np.load(args.replay)
        sort = args.variant or str(z["variant"])
        head = ("saved answers of NumPy %s on %s (%s), library variant %s:"
                % (z["numpy"], z["machine"], z["cpu"], sort))
        source = replayed(np, args.replay)
    else:
        sort = args.variant or detected
        head = ("NumPy %s on %s (%s): detected variant %s, library variant %s:"
                % (np.__version__, platform.processor() or platform.machine(),
                   cpu_features(np), detected, sort))
        source = live(np)
    digests_ok = check_digests(np, lib)
    if sort not in VARIANTS:
        print(head)
        print("SKIP: NumPy %s sorts equal keys in an order none of the variants gives"
              % np.__version__)
        for v in VARIANTS:
            compare(np, lib, v, live(np)).report("  as %s:" % v)
        return SKIP
    bad = compare(np, lib, sort, source).report(head)
    return 0 if bad == 0 and digests_ok else 1


if __name__ == "__main__":
    sys.exit(main())
