"""Forced draws: the real Ultralytics transforms, with every random value
they take served from detfeed's recipe.

Ultralytics draws its random parameters from Python's `random` module and
from NumPy's legacy global generator (`np.random`), both looked up as names
of the module ultralytics.data.augment. `forced(queue)` replaces those two
names, for the duration of a `with` block, by stand-ins that serve a queue of
expected calls. Before each sample the suite builds the queue with
`sample_plan`: the calls Ultralytics makes for that sample, in its order,
each with its expected arguments and the value detfeed's recipe takes from
its slot. The values come from the library itself (detfeed_uniform(seed,
slot, epoch, index), so the Philox generator is not re-implemented here) and
are mapped to parameters as src/aug/recipe.c maps them:

  Ultralytics call (in order)            slot  value served
  -------------------------------------  ----  -------------------------------
  Mosaic gate  random.uniform(0, 1)         0  u  (mosaic when not u > p)
  partners     random.randint(0, n-1) x3  1-3  min(floor(u * n), n - 1)
  centre y     random.uniform(s/2, 2s-s/2)  4  s/2 + (2s - s) * u  (then int())
  centre x     random.uniform(s/2, 2s-s/2)  5  same
  (CopyPaste: with copy_paste = 0 or in mode flip it draws nothing)
  perspective  random.uniform(-p, p)  x, y 6-7  -p + 2p * u
  angle        random.uniform(-deg, deg)    8  -deg + 2deg * u
  scale        random.uniform(1-sc, 1+sc)   9  (1 - sc) + 2sc * u
  shear        random.uniform(-sh, sh) x,y 10-11
  translate    random.uniform(.5-t, .5+t) 12-13
  CopyPaste in mode mixup (at the end of the pre-chain; only when the
  sample has polygons, else none of these):
    gate       random.uniform(0, 1)        24  u  (pastes when not u > p)
    partner    random.randint(0, n-1)      25  min(floor(u * n), n - 1)
    partner's own Mosaic/affine draws  256-269 the rows above, slot + 256
  (a partner's pre-chain at base b has these at b + 24, b + 25, b + 256)
  MixUp gate   random.uniform(0, 1)        14  u  (mixup when not u > p)
    partner    random.randint(0, n-1)      22  min(floor(u * n), n - 1)
    partner's own Mosaic/affine draws   32-45  the rows above, slot + 32
    ratio      np.random.beta(32.0, 32.0) 64-126  32nd smallest of 63 u
  CutMix gate  random.uniform(0, 1)        15  u  (cutmix when not u > p)
    partner    random.randint(0, n-1)      23  min(floor(u * n), n - 1)
    partner's own Mosaic/affine draws  128-141 the rows above, slot + 128
    areas x3   np.random.beta(1.0, 1.0) 160+3k u  (Beta(1, 1) is uniform)
               np.random.randint(s)    161+3k min(floor(u * s), s - 1)  x centre
               np.random.randint(s)    162+3k same, y centre
    area       np.random.choice(free)     169  free[min(floor(u * m), m - 1)]
                                              (only when some area is free)
  (Albumentations without the package installed draws nothing)
  RandomHSV    np.random.uniform(-1, 1, 3) 16-18  -1 + 2u each (h, s, v), only
                                                  when a gain is non-zero
  vertical     random.random()             19  u  (flip when u < flipud)
  horizontal   random.random()             20  u  (flip when u < fliplr)
  Format bgr   random.uniform(0, 1)        21  u  (RGB when u > bgr)

random.uniform(a, b) is served as a + (b - a) * u in double precision, which
is both what CPython computes from its own random() and what the recipe
computes; np.random.uniform(low, high, 3) as low + (high - low) * u.
Validation (augment off) makes one call: Format's bgr gate (slot 21).

The plan follows Ultralytics' control flow: whether a branch that draws
more runs (Mosaic, MixUp) is decided from the served value and Ultralytics'
own probability (close_mosaic sets mosaic and mixup to 0 there), not from
detfeed's decision; where the two disagree the pixels show it.

A call that is not in the plan, a call with other arguments, or calls of
the plan left over when the sample is done raise DrawMismatch naming the
sample and the call. `GlobalRngGuard` checks that nothing else in the sample
path drew from the global generators (Python, NumPy, PyTorch).
"""
import math
import random as _py_random
import types

import numpy as _np

# Slots of src/aug/recipe.h (the header's "Randomness" table).
SLOT_MOSAIC, SLOT_PARTNER, SLOT_YC, SLOT_XC = 0, 1, 4, 5
SLOT_PERSPECTIVE, SLOT_ANGLE, SLOT_SCALE, SLOT_SHEAR, SLOT_TRANSLATE = 6, 8, 9, 10, 12
SLOT_MIXUP, SLOT_CUTMIX, SLOT_HSV, SLOT_FLIPUD, SLOT_FLIPLR, SLOT_BGR = 14, 15, 16, 19, 20, 21
SLOT_MIX_PARTNER, SLOT_PARTNER_BASE, SLOT_MIX_RATIO = 22, 32, 64
SLOT_CUT_PARTNER, SLOT_CUT_BASE, SLOT_CUT_AREA, SLOT_CUT_CHOICE = 23, 128, 160, 169
SLOT_CP_GATE, SLOT_CP_PARTNER, SLOT_CP_BASE = 24, 25, 256


class DrawMismatch(AssertionError):
    """Ultralytics asked for a draw the plan does not have, or left some out."""


class UnsupportedPlan(ValueError):
    """A configuration whose draws detfeed's recipe does not define."""


class Call:
    """One expected call: its qualified name, arguments, the value to return,
    and where the value comes from (for messages). args None: any arguments,
    and value is then a function of them (a draw from data, like
    np.random.choice(idx)). optional: Ultralytics makes the call or not,
    depending on the data (the next call decides)."""

    def __init__(self, name, args, value, source, optional=False):
        self.name, self.value, self.source = name, value, source
        self.args = None if args is None else tuple(args)
        self.optional = optional
        # group: optional calls made all or none, decided at the first,
        # which the transform class `owner` makes (None: its name decides)
        self.group = self.owner = None

    def __repr__(self):
        return "%s%r [%s]" % (self.name, self.args, self.source)


def _same_args(expected, got):
    if expected is None:
        return True
    if len(expected) != len(got):
        return False
    for e, g in zip(expected, got):
        if isinstance(e, float) or isinstance(g, float):
            if float(e) != float(g):
                return False
        elif e != g:
            return False
    return True


class DrawQueue:
    """The calls expected for the sample in progress."""

    def __init__(self):
        self.label, self.calls, self.pos, self.error = None, None, 0, None

    def begin(self, label, calls):
        self.label, self.calls, self.pos, self.error = label, list(calls), 0, None

    def take(self, name, args, kwargs):
        if self.calls is None:
            self._fail("%s%r drawn outside a sample" % (name, tuple(args)))
        if kwargs:
            self._fail("%s: %s%r with keyword arguments %r" % (self.label, name, tuple(args),
                                                                 kwargs))
        if self.pos >= len(self.calls):
            self._fail("%s: unexpected draw #%d %s%r: the plan has %d calls (%s)" % (
                self.label, self.pos + 1, name, tuple(args), len(self.calls),
                ", ".join(c.name for c in self.calls)))
        exp = self.calls[self.pos]
        while exp.optional and not self._made(exp, name) and self.pos + 1 < len(self.calls):
            self._skip()  # not made: the data decided so
            exp = self.calls[self.pos]
        if exp.name != name or not _same_args(exp.args, args):
            self._fail("%s: draw #%d is %s%r, the plan expects %r" % (
                self.label, self.pos + 1, name, tuple(args), exp))
        self.pos += 1
        value = exp.value(*args) if exp.args is None else exp.value
        return value.copy() if isinstance(value, _np.ndarray) else value

    @staticmethod
    def _made(exp, name):
        """Whether this draw is the optional call exp (its group's first
        call: made by its owner's class, looked up in the caller's frame)."""
        if exp.name != name:
            return False
        if exp.owner is None:
            return True
        import sys
        caller = sys._getframe(3).f_locals.get("self")  # _made, take, draw, caller
        return type(caller).__name__ == exp.owner

    def _skip(self):
        """Skips the optional call at pos, and the rest of its group."""
        group = self.calls[self.pos].group
        self.pos += 1
        while group is not None and self.pos < len(self.calls) and \
                self.calls[self.pos].group is group:
            self.pos += 1

    def end(self):
        """Raises DrawMismatch if a draw went wrong (even one that Ultralytics
        caught) or if planned calls were not made."""
        label, calls, pos, error = self.label, self.calls, self.pos, self.error
        self.label, self.calls, self.pos, self.error = None, None, 0, None
        if error:
            raise DrawMismatch(error)
        while calls is not None and pos < len(calls) and calls[pos].optional:
            pos += 1  # the rest, optional, not made
        if calls is not None and pos != len(calls):
            raise DrawMismatch("%s: %d planned draw(s) not made, from #%d: %s" % (
                label, len(calls) - pos, pos + 1, ", ".join(map(repr, calls[pos:]))))

    def _fail(self, message):
        if self.error is None:
            self.error = message
        raise DrawMismatch(message)


class _ForcedModule:
    """Stands in for a random module: any function called on it is checked
    against the queue under `prefix + name`."""

    def __init__(self, queue, prefix):
        self._queue, self._prefix = queue, prefix

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        queue, qual = self._queue, self._prefix + name

        def draw(*args, **kwargs):
            return queue.take(qual, args, kwargs)

        draw.__name__ = name
        return draw


class _NumpyProxy(types.ModuleType):
    """numpy as ultralytics.data.augment sees it: everything is the real
    module except `random`."""

    def __init__(self, queue):
        super().__init__("numpy")
        self.random = _ForcedModule(queue, "np.random.")

    def __getattr__(self, name):
        return getattr(_np, name)


class forced:
    """`with forced(queue):` replaces `random` and `np` in
    ultralytics.data.augment by the forced stand-ins, and puts them back."""

    def __init__(self, queue):
        self.queue = queue

    def __enter__(self):
        import ultralytics.data.augment as A
        self._mod = A
        self._saved = (A.random, A.np)
        A.random = _ForcedModule(self.queue, "random.")
        A.np = _NumpyProxy(self.queue)
        return self

    def __exit__(self, *exc):
        self._mod.random, self._mod.np = self._saved
        return False


class GlobalRngGuard:
    """Records the state of the global generators (Python's random, NumPy's
    legacy generator, PyTorch's CPU generator) and tells whether anything
    drew from them since."""

    def __init__(self):
        self.snap = self._state()

    @staticmethod
    def _state():
        import torch
        np_state = _np.random.get_state()
        return (_py_random.getstate(), np_state[0], np_state[1].tobytes(), np_state[2:],
                bytes(torch.random.get_rng_state().numpy().tobytes()))

    def changed(self):
        """The names of the generators that moved (empty when none)."""
        now = self._state()
        names = []
        if now[0] != self.snap[0]:
            names.append("random")
        if now[1:4] != self.snap[1:4]:
            names.append("numpy.random")
        if now[4] != self.snap[4]:
            names.append("torch")
        self.snap = now
        return names


class Hyp:
    """The probabilities and ranges that decide Ultralytics' draws, as the
    reference dataset holds them (after its own zeroing: close_mosaic)."""

    def __init__(self, imgsz, mosaic, mixup, cutmix, copy_paste, degrees, translate, scale,
                 shear, perspective, hsv_h, hsv_s, hsv_v, flipud, fliplr, bgr,
                 copy_paste_mode="flip"):
        self.imgsz = imgsz
        self.mosaic, self.mixup, self.cutmix, self.copy_paste = mosaic, mixup, cutmix, copy_paste
        self.copy_paste_mode = copy_paste_mode
        self.degrees, self.translate, self.scale = degrees, translate, scale
        self.shear, self.perspective = shear, perspective
        self.hsv = (hsv_h, hsv_s, hsv_v)
        self.flipud, self.fliplr, self.bgr = flipud, fliplr, bgr

    @classmethod
    def from_transforms(cls, dataset):
        """Reads the values from the dataset's built transforms, so that the
        plan follows what Ultralytics actually runs (e.g. after
        close_mosaic rebuilt them)."""
        import ultralytics.data.augment as A
        found = {}

        def walk(t):
            if isinstance(t, A.Compose):
                for x in t.transforms:
                    walk(x)
                return
            kind = type(t).__name__
            found.setdefault(kind, t)

        walk(dataset.transforms)
        m, rp, mx, cm = (found.get(k) for k in ("Mosaic", "RandomPerspective", "MixUp",
                                                  "CutMix"))
        hsv, fmt, cp = found.get("RandomHSV"), found.get("Format"), found.get("CopyPaste")
        flips = [t for t in _flat(dataset.transforms) if type(t).__name__ == "RandomFlip"]
        fl = {f.direction: f.p for f in flips}
        if m is None:  # validation: LetterBox and Format only
            return cls(imgsz=None, mosaic=0.0, mixup=0.0, cutmix=0.0, copy_paste=0.0, degrees=0.0,
                       translate=0.0, scale=0.0, shear=0.0, perspective=0.0, hsv_h=0.0,
                       hsv_s=0.0, hsv_v=0.0, flipud=0.0, fliplr=0.0, bgr=fmt.bgr)
        alb = found.get("Albumentations")
        if alb is not None and alb.transform is not None:
            raise UnsupportedPlan("Albumentations is installed and active: its draws use "
                                  "its own generator; uninstall it for the suite")
        if m is not None and m.n != 4:
            raise UnsupportedPlan("Mosaic n=%d (detfeed has the 4-tile mosaic)" % m.n)
        if not isinstance(rp.scale, (int, float)):
            raise UnsupportedPlan("RandomPerspective scale given as a range")
        return cls(imgsz=m.imgsz, mosaic=m.p, mixup=mx.p, cutmix=cm.p,
                   copy_paste=cp.p if cp is not None else 0.0,
                   copy_paste_mode=cp.mode if cp is not None else "flip", degrees=rp.degrees,
                   translate=rp.translate, scale=rp.scale, shear=rp.shear,
                   perspective=rp.perspective, hsv_h=hsv.hgain, hsv_s=hsv.sgain,
                   hsv_v=hsv.vgain, flipud=fl.get("vertical", 0.0),
                   fliplr=fl.get("horizontal", 0.0), bgr=fmt.bgr)


def _flat(t):
    import ultralytics.data.augment as A
    if isinstance(t, A.Compose):
        out = []
        for x in t.transforms:
            out += _flat(x)
        return out
    return [t]


class Summary:
    """What Ultralytics decides for a sample under the served draws: the
    branches (for grouping differences) and, in `values`, the parameters
    under the names of detfeed's recipe as a dict (detfeed._lib's
    Recipe.as_dict, what `detfeed sample --json` writes), to compare them."""

    def __init__(self):
        self.mosaic = self.mixup = self.cutmix = self.flipud = self.fliplr = None
        self.partner_mosaic = None
        self.rgb = True
        self.values = {}

    def kind(self):
        """A short name of the sample's branches: mosaic or not, mixup."""
        k = "mosaic" if self.mosaic else "no-mosaic"
        if self.mixup:
            k += "+mixup(partner %s)" % ("mosaic" if self.partner_mosaic else "no-mosaic")
        if self.cutmix:
            k += "+cutmix"
        return k


def sample_plan(u, hyp, n, train=True):
    """The calls Ultralytics makes for one sample, with their values.

    u(slot) gives the sample's uniform of a slot; hyp is a Hyp; n the
    dataset size. Returns (calls, Summary)."""
    calls, info = [], Summary()

    def uniform(slot, a, b, what):
        calls.append(Call("random.uniform", (a, b), a + (b - a) * u(slot),
                          "slot %d %s" % (slot, what)))
        return calls[-1].value

    def randint(slot, what):
        j = min(int(math.floor(u(slot) * n)), n - 1)
        calls.append(Call("random.randint", (0, n - 1), j, "slot %d %s" % (slot, what)))
        return j

    if not train:
        info.rgb = uniform(SLOT_BGR, 0, 1, "Format bgr gate") > hyp.bgr
        return calls, info

    s = hyp.imgsz

    def pre_transform(base, who, paste=True):
        """Mosaic, CopyPaste, RandomPerspective (v8_transforms' pre_transform;
        without CopyPaste as CopyPaste's own partner's). Returns the
        parameters under the recipe's names."""
        v = {}
        v["mosaic"] = not uniform(base + SLOT_MOSAIC, 0, 1, who + "mosaic gate") > hyp.mosaic
        if v["mosaic"]:
            v["partners"] = [randint(base + SLOT_PARTNER + k, who + "mosaic partner %d" % (k + 1))
                             for k in range(3)]
            v["yc"] = int(uniform(base + SLOT_YC, s // 2, 2 * s - s // 2, who + "mosaic centre y"))
            v["xc"] = int(uniform(base + SLOT_XC, s // 2, 2 * s - s // 2, who + "mosaic centre x"))
        # CopyPaste in mode flip draws nothing
        p, d, sc, sh, t = hyp.perspective, hyp.degrees, hyp.scale, hyp.shear, hyp.translate
        v["perspective"] = [uniform(base + SLOT_PERSPECTIVE, -p, p, who + "perspective x"),
                            uniform(base + SLOT_PERSPECTIVE + 1, -p, p, who + "perspective y")]
        v["angle"] = uniform(base + SLOT_ANGLE, -d, d, who + "angle")
        v["scale"] = uniform(base + SLOT_SCALE, 1 - sc, 1 + sc, who + "scale")
        v["shear"] = [uniform(base + SLOT_SHEAR, -sh, sh, who + "shear x"),
                      uniform(base + SLOT_SHEAR + 1, -sh, sh, who + "shear y")]
        v["translate"] = [uniform(base + SLOT_TRANSLATE, 0.5 - t, 0.5 + t, who + "translate x"),
                          uniform(base + SLOT_TRANSLATE + 1, 0.5 - t, 0.5 + t,
                                  who + "translate y")]
        if paste and hyp.copy_paste and hyp.copy_paste_mode == "mixup":
            v.update(paste_mixup(base, who))
        return v

    def paste_mixup(base, who):
        """CopyPaste in mode mixup: drawn only when the sample has polygons
        (the group is skipped when the next draw is not CopyPaste's)."""
        group, first = object(), len(calls)
        gate = not uniform(base + SLOT_CP_GATE, 0, 1, who + "CopyPaste gate") > hyp.copy_paste
        v = {"copy_paste": gate}
        if gate:
            v["cp_partner"] = randint(base + SLOT_CP_PARTNER, who + "CopyPaste partner")
            v["cp_recipe"] = pre_transform(base + SLOT_CP_BASE, who + "CopyPaste partner's ",
                                           paste=False)
        for c in calls[first:]:
            c.optional, c.group = True, group
        calls[first].owner = "CopyPaste"
        return v

    v = info.values
    v.update(pre_transform(0, ""))
    info.mosaic = v["mosaic"]
    info.mixup = v["mixup"] = not uniform(SLOT_MIXUP, 0, 1, "MixUp gate") > hyp.mixup
    if info.mixup:
        v["mix_partner"] = randint(SLOT_MIX_PARTNER, "MixUp partner")
        v["mix_recipe"] = pre_transform(SLOT_PARTNER_BASE, "MixUp partner's ")
        info.partner_mosaic = v["mix_recipe"]["mosaic"]
        ratio = sorted(u(SLOT_MIX_RATIO + k) for k in range(63))[31]
        calls.append(Call("np.random.beta", (32.0, 32.0), ratio,
                          "slots %d-%d MixUp ratio" % (SLOT_MIX_RATIO, SLOT_MIX_RATIO + 62)))
        v["mix_ratio"] = ratio
    info.cutmix = v["cutmix"] = not uniform(SLOT_CUTMIX, 0, 1, "CutMix gate") > hyp.cutmix
    if info.cutmix:
        v["cut_partner"] = randint(SLOT_CUT_PARTNER, "CutMix partner")
        v["cut_recipe"] = pre_transform(SLOT_CUT_BASE, "CutMix partner's ")

        def below(slot, k):
            return min(int(math.floor(u(slot) * k)), k - 1)

        for k in range(3):  # CutMix.num_areas, each _rand_bbox(w, h) with w = h = s
            at = SLOT_CUT_AREA + 3 * k
            calls.append(Call("np.random.beta", (1.0, 1.0), u(at),
                              "slot %d CutMix area %d lam" % (at, k)))
            calls.append(Call("np.random.randint", (s,), below(at + 1, s),
                              "slot %d CutMix area %d x" % (at + 1, k)))
            calls.append(Call("np.random.randint", (s,), below(at + 2, s),
                              "slot %d CutMix area %d y" % (at + 2, k)))
        c = u(SLOT_CUT_CHOICE)
        calls.append(Call("np.random.choice", None,
                          lambda idx: idx[min(int(math.floor(c * len(idx))), len(idx) - 1)],
                          "slot %d CutMix area choice" % SLOT_CUT_CHOICE, optional=True))
    v["hsv"] = bool(any(hyp.hsv))
    if any(hyp.hsv):
        g = _np.array([-1 + 2 * u(SLOT_HSV + k) for k in range(3)], dtype=_np.float64)
        calls.append(Call("np.random.uniform", (-1, 1, 3), g, "slots 16-18 HSV gains"))
        v["gains"] = [float(x) for x in g * _np.array(hyp.hsv, dtype=_np.float64)]
    calls.append(Call("random.random", (), u(SLOT_FLIPUD), "slot 19 vertical flip"))
    info.flipud = v["flipud"] = calls[-1].value < hyp.flipud
    calls.append(Call("random.random", (), u(SLOT_FLIPLR), "slot 20 horizontal flip"))
    info.fliplr = v["fliplr"] = calls[-1].value < hyp.fliplr
    info.rgb = uniform(SLOT_BGR, 0, 1, "Format bgr gate") > hyp.bgr
    return calls, info
