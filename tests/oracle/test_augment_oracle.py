"""Training and validation samples, with the stack set to Ultralytics 8.3 on
OpenCV 4.x, against a reference written from Ultralytics 8.3's transforms
with cv2 and NumPy (ultralytics-pipeline.md §5):
load_image, Mosaic, LetterBox, RandomPerspective, RandomHSV, RandomFlip and
Format, driven by the recipe `detfeed sample --json` prints. Images must be
byte-identical and labels equal as float32.
"""
import json
import math
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
import oracle_util as ou  # noqa: E402


def points_abs(p, w, h, padw, padh, r=None):
    """Keypoints or polygon points (x, y in the last axis) denormalized,
    scaled and shifted in float32, as Instances does for both."""
    p = p.copy()
    p[..., 0] *= w
    p[..., 1] *= h
    if r is not None:
        p[..., 0] *= r
        p[..., 1] *= r
    p[..., 0] += padw
    p[..., 1] += padh
    return p


class Ref:
    """The reference pipeline for one dataset."""

    def __init__(self, cv2, np, imgsz, nkpt=0, kdim=0, flip_idx=None):
        self.cv2, self.np, self.s = cv2, np, imgsz
        self.nkpt, self.kdim, self.flip_idx = nkpt, kdim, flip_idx

    def load(self, path):
        cv2, np = self.cv2, self.np
        im = cv2.imdecode(np.fromfile(path, np.uint8), cv2.IMREAD_COLOR)
        h0, w0 = im.shape[:2]
        r = self.s / max(h0, w0)
        if r != 1:
            w, h = min(math.ceil(w0 * r), self.s), min(math.ceil(h0 * r), self.s)
            im = cv2.resize(im, (w, h), interpolation=cv2.INTER_LINEAR)
        return im, self.labels(path)

    def labels(self, path):
        np = self.np
        lp = "/labels/".join(path.rsplit("/images/", 1)).rsplit(".", 1)[0] + ".txt"
        n5 = 5 + self.nkpt * self.kdim
        rows = []
        if os.path.exists(lp):
            rows = [x.split() for x in open(lp).read().strip().splitlines() if len(x)]
        lb = np.array(rows, dtype=np.float32).reshape(-1, n5)
        kp = None
        if self.nkpt:
            k = lb[:, 5:].reshape(-1, self.nkpt, self.kdim)
            if self.kdim == 2:
                vis = np.where((k[..., 0] < 0) | (k[..., 1] < 0), 0.0, 1.0).astype(np.float32)
                k = np.concatenate([k, vis[..., None]], axis=-1)
            kp = k.copy()
        return lb[:, :1].copy(), lb[:, 1:5].copy(), kp

    # --- Instances helpers (float32, as Ultralytics' numpy code) ---------------
    def xywh2xyxy(self, x):
        y = self.np.empty_like(x)
        dw, dh = x[:, 2] / 2, x[:, 3] / 2
        y[:, 0], y[:, 1], y[:, 2], y[:, 3] = x[:, 0] - dw, x[:, 1] - dh, x[:, 0] + dw, x[:, 1] + dh
        return y

    def xyxy2xywh(self, x):
        y = self.np.empty_like(x)
        y[:, 0] = (x[:, 0] + x[:, 2]) / 2
        y[:, 1] = (x[:, 1] + x[:, 3]) / 2
        y[:, 2] = x[:, 2] - x[:, 0]
        y[:, 3] = x[:, 3] - x[:, 1]
        return y

    def to_abs(self, boxes, kp, w, h, padw, padh, r=None):
        b = self.xywh2xyxy(boxes)
        for c, m in ((0, w), (1, h), (2, w), (3, h)):
            b[:, c] *= m
        if r is not None:
            b *= r  # Bboxes.mul: column-wise float32 multiplies by r
        b[:, [0, 2]] += padw
        b[:, [1, 3]] += padh
        return b, (points_abs(kp, w, h, padw, padh, r) if kp is not None else None)

    def clip(self, b, kp, w, h):
        b[:, [0, 2]] = b[:, [0, 2]].clip(0, w)
        b[:, [1, 3]] = b[:, [1, 3]].clip(0, h)
        if kp is not None:
            out = (kp[..., 0] < 0) | (kp[..., 0] > w) | (kp[..., 1] < 0) | (kp[..., 1] > h)
            kp[..., 2][out] = 0.0

    # --- transforms ------------------------------------------------------------
    def mosaic(self, tiles, xc, yc):
        np, s = self.np, self.s
        img4, pads = ou.mosaic_canvas(np, [img for img, _ in tiles], s, xc, yc)
        cls, boxes, kps = [], [], []
        for (img, (c, b, kp)), (padw, padh) in zip(tiles, pads):
            h, w = img.shape[:2]
            bb, kk = self.to_abs(b, kp, w, h, padw, padh)
            cls.append(c)
            boxes.append(bb)
            kps.append(kk)
        c = np.concatenate(cls, 0)
        b = np.concatenate(boxes, 0)
        kp = np.concatenate(kps, 0) if self.nkpt else None
        self.clip(b, kp, 2 * s, 2 * s)
        good = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1]) > 0
        return img4, c[good], b[good], (kp[good] if kp is not None else None)

    def letterbox(self, img, lab, new_shape, scaleup):
        cv2 = self.cv2
        c, b, kp = lab
        shape = img.shape[:2]
        r = min(new_shape[0] / shape[0], new_shape[1] / shape[1])
        if not scaleup:
            r = min(r, 1.0)
        new_unpad = int(round(shape[1] * r)), int(round(shape[0] * r))
        dw, dh = (new_shape[1] - new_unpad[0]) / 2, (new_shape[0] - new_unpad[1]) / 2
        out = img
        if shape[::-1] != new_unpad:
            out = cv2.resize(img, new_unpad, interpolation=cv2.INTER_LINEAR)
        top, bottom = int(round(dh - 0.1)), int(round(dh + 0.1))
        left, right = int(round(dw - 0.1)), int(round(dw + 0.1))
        out = cv2.copyMakeBorder(out, top, bottom, left, right, cv2.BORDER_CONSTANT,
                                 value=(114, 114, 114))
        bb, kk = self.to_abs(b, kp, shape[1], shape[0], left, top, r=r)
        return out, c, bb, kk

    def perspective(self, img, c, b, kp, rec, border):
        cv2, np = self.cv2, self.np
        size = img.shape[1] + border * 2, img.shape[0] + border * 2
        C = np.eye(3, dtype=np.float32)
        C[0, 2], C[1, 2] = -img.shape[1] / 2, -img.shape[0] / 2
        P = np.eye(3, dtype=np.float32)
        P[2, 0], P[2, 1] = rec["perspective"]
        R = np.eye(3, dtype=np.float32)
        R[:2] = cv2.getRotationMatrix2D(angle=rec["angle"], center=(0, 0), scale=rec["scale"])
        S = np.eye(3, dtype=np.float32)
        S[0, 1] = math.tan(rec["shear"][0] * math.pi / 180)
        S[1, 0] = math.tan(rec["shear"][1] * math.pi / 180)
        T = np.eye(3, dtype=np.float32)
        T[0, 2] = rec["translate"][0] * size[0]
        T[1, 2] = rec["translate"][1] * size[1]
        M = T @ S @ R @ P @ C
        self.last_warp = (None, M, size)
        persp = rec["perspective"][0] != 0 or rec["perspective"][1] != 0
        if persp:
            out = cv2.warpPerspective(img, M, dsize=size, borderValue=(114, 114, 114))
        else:
            out = cv2.warpAffine(img, M[:2], dsize=size, borderValue=(114, 114, 114))
        n = len(b)
        xy = np.ones((n * 4, 3), dtype=b.dtype)
        xy[:, :2] = b[:, [0, 1, 2, 3, 0, 3, 2, 1]].reshape(n * 4, 2)
        xy = xy @ M.T
        xy = (xy[:, :2] / xy[:, 2:3] if persp else xy[:, :2]).reshape(n, 8)
        x, y = xy[:, [0, 2, 4, 6]], xy[:, [1, 3, 5, 7]]
        nb = np.concatenate((x.min(1), y.min(1), x.max(1), y.max(1)), dtype=b.dtype).reshape(4, n).T
        nk = None
        if kp is not None:
            m = len(kp) * self.nkpt
            pts = np.ones((m, 3), dtype=kp.dtype)
            pts[:, :2] = kp[..., :2].reshape(m, 2)
            vis = kp[..., 2].reshape(m, 1).copy()
            pts = pts @ M.T
            pts = pts[:, :2] / pts[:, 2:3]
            outm = (pts[:, 0] < 0) | (pts[:, 1] < 0) | (pts[:, 0] > size[0]) | (pts[:, 1] > size[1])
            vis[outm] = 0
            nk = np.concatenate([pts, vis], axis=-1).reshape(len(kp), self.nkpt, 3)
        self.clip(nb, nk, size[0], size[1])
        b1 = b.copy()
        b1 *= rec["scale"]
        w1, h1 = b1[:, 2] - b1[:, 0], b1[:, 3] - b1[:, 1]
        w2, h2 = nb[:, 2] - nb[:, 0], nb[:, 3] - nb[:, 1]
        eps = 1e-16
        ar = np.maximum(w2 / (h2 + eps), h2 / (w2 + eps))
        keep = (w2 > 2) & (h2 > 2) & (w2 * h2 / (w1 * h1 + eps) > 0.1) & (ar < 100)
        return out, c[keep], nb[keep], (nk[keep] if nk is not None else None)

    def finish(self, img, c, b, kp, rec, train):
        np = self.np
        if train and rec["hsv"]:
            ou.random_hsv(img, rec["gains"])
        b = self.xyxy2xywh(b)
        h, w = img.shape[:2]
        if train and rec["flipud"]:
            img = np.flipud(img)
            b[:, 1] = h - b[:, 1]
            if kp is not None:
                kp[..., 1] = h - kp[..., 1]
                kp = kp[:, self.flip_idx, :]
        if train and rec["fliplr"]:
            img = np.fliplr(img)
            b[:, 0] = w - b[:, 0]
            if kp is not None:
                kp[..., 0] = w - kp[..., 0]
                kp = kp[:, self.flip_idx, :]
        img = np.ascontiguousarray(img)
        for col, m in ((0, w), (1, h), (2, w), (3, h)):
            b[:, col] *= 1 / m
        if kp is not None:
            kp[..., 0] /= w
            kp[..., 1] /= h
        return img, c, b, kp

    def rect_shapes(self, paths, batch=16, stride=32, pad=0.5):
        """Ultralytics' set_rectangle: each image's batch shape (h, w), with
        its np.argsort (the caller names this NumPy's variant to detfeed)."""
        np = self.np
        if getattr(self, "_rect", None) is None:
            hw = np.array([self.cv2.imread(p).shape[:2] for p in paths], dtype=np.float64)
            ar = hw[:, 0] / hw[:, 1]
            irect = ar.argsort()
            bi = np.floor(np.arange(len(paths)) / batch).astype(int)
            nb = bi[-1] + 1
            ars = ar[irect]
            shapes = [[1, 1]] * nb
            for i in range(nb):
                ari = ars[bi == i]
                mini, maxi = ari.min(), ari.max()
                if maxi < 1:
                    shapes[i] = [maxi, 1]
                elif mini > 1:
                    shapes[i] = [1, 1 / mini]
            batch_shapes = np.ceil(np.array(shapes) * self.s / stride + pad).astype(int) * stride
            self._rect = {}
            for pos, i in enumerate(irect):
                self._rect[int(i)] = tuple(int(x) for x in batch_shapes[bi[pos]])
        return self._rect

    def sample(self, paths, rec, train):
        if not train:
            img, lab = self.load(paths[rec["index"]])
            shape = self.rect_shapes(paths)[rec["index"]]
            img, c, b, kp = self.letterbox(img, lab, shape, scaleup=False)
            return self.finish(img, c, b, kp, rec, False)
        img, c, b, kp = self.pre_chain(paths, rec["index"], rec)
        if rec["mixup"]:  # MixUp: the partner through its own pre-chain, then blend
            img2, c2, b2, kp2 = self.pre_chain(paths, rec["mix_partner"], rec["mix_recipe"])
            r = rec["mix_ratio"]
            img = (img * r + img2 * (1 - r)).astype(self.np.uint8)
            c = self.np.concatenate([c, c2], 0)
            b = self.np.concatenate([b, b2], 0)
            if kp is not None:
                kp = self.np.concatenate([kp, kp2], 0)
        return self.finish(img, c, b, kp, rec, True)

    def pre_chain(self, paths, index, rec):
        """Mosaic (or LetterBox) then RandomPerspective for image `index`."""
        if rec["mosaic"]:
            tiles = [self.load(paths[i]) for i in [index] + rec["partners"]]
            img, c, b, kp = self.mosaic(tiles, rec["xc"], rec["yc"])
            border = -self.s // 2
        else:
            im, lab = self.load(paths[index])
            img, c, b, kp = self.letterbox(im, lab, (self.s, self.s), scaleup=True)
            border = 0
        return self.perspective(img, c, b, kp, rec, border)


class SegRef(Ref):
    """The reference for polygon labels (the segment task): polygons resampled
    as YOLODataset.update_labels_info does, moved with the boxes, boxes from
    the polygons in RandomPerspective, and Format's overlap masks (ratio 4).
    The polygons ride in the keypoint slot of the base class's tuples."""

    def labels(self, path):
        np = self.np
        lp = "/labels/".join(path.rsplit("/images/", 1)).rsplit(".", 1)[0] + ".txt"
        rows = [x.split() for x in open(lp).read().strip().splitlines() if len(x)]
        c = np.array([r[0] for r in rows], np.float32).reshape(-1, 1)
        segs = [np.array(r[1:], dtype=np.float32).reshape(-1, 2) for r in rows]
        boxes = np.array([[s[:, 0].min(), s[:, 1].min(), s[:, 0].max(), s[:, 1].max()]
                          for s in segs], np.float32).reshape(-1, 4)
        n = 1000
        if segs:
            longest = max(len(s) for s in segs)
            n = longest + 1 if n < longest else n
            segs = np.stack(self.resample(segs, n), 0)
        else:
            segs = np.zeros((0, n, 2), np.float32)
        return c, self.xyxy2xywh(boxes), segs

    def resample(self, segments, n):
        np = self.np  # ultralytics/utils/ops.py resample_segments (2025)
        for i, s in enumerate(segments):
            if len(s) == n:
                continue
            s = np.concatenate((s, s[0:1, :]), axis=0)
            x = np.linspace(0, len(s) - 1, n - len(s) if len(s) < n else n)
            xp = np.arange(len(s))
            x = np.insert(x, np.searchsorted(x, xp), xp) if len(s) < n else x
            segments[i] = np.concatenate([np.interp(x, xp, s[:, k]) for k in range(2)],
                                         dtype=np.float32).reshape(2, -1).T
        return segments

    def to_abs(self, boxes, seg, w, h, padw, padh, r=None):
        b, _ = Ref.to_abs(self, boxes, None, w, h, padw, padh, r)
        return b, points_abs(seg, w, h, padw, padh, r)

    def clip(self, b, seg, w, h):
        Ref.clip(self, b, None, w, h)
        if seg is not None:
            seg[..., 0] = seg[..., 0].clip(0, w)
            seg[..., 1] = seg[..., 1].clip(0, h)

    def mosaic(self, tiles, xc, yc):
        np, s = self.np, self.s
        img4, pads = ou.mosaic_canvas(np, [img for img, _ in tiles], s, xc, yc)
        cls, boxes, segs = [], [], []
        for (img, (c, b, seg)), (padw, padh) in zip(tiles, pads):
            h, w = img.shape[:2]
            bb, ss = self.to_abs(b, seg, w, h, padw, padh)
            cls.append(c)
            boxes.append(bb)
            segs.append(ss)
        c, b, seg = (np.concatenate(x, 0) for x in (cls, boxes, segs))
        self.clip(b, seg, 2 * s, 2 * s)
        good = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1]) > 0
        return img4, c[good], b[good], seg[good]

    def perspective(self, img, c, b, seg, rec, border):
        np = self.np
        out, _, nb, _ = Ref.perspective(self, img, c, b, None, rec, border)
        _, M, size = self.last_warp
        if len(seg):
            n, num = seg.shape[:2]
            xy = np.ones((n * num, 3), dtype=seg.dtype)
            xy[:, :2] = seg.reshape(-1, 2)
            xy = xy @ M.T
            seg = (xy[:, :2] / xy[:, 2:3]).reshape(n, -1, 2)
            nb = []
            for pts in seg:  # segment2box
                x, y = pts.T
                inside = (x >= 0) & (y >= 0) & (x <= size[0]) & (y <= size[1])
                x, y = x[inside], y[inside]
                nb.append(np.array([x.min(), y.min(), x.max(), y.max()], dtype=pts.dtype)
                          if any(x) else np.zeros(4, dtype=pts.dtype))
            nb = np.stack(nb, 0)
            seg[..., 0] = seg[..., 0].clip(nb[:, 0:1], nb[:, 2:3])
            seg[..., 1] = seg[..., 1].clip(nb[:, 1:2], nb[:, 3:4])
        self.clip(nb, seg, size[0], size[1])
        b1 = b.copy()
        b1 *= rec["scale"]
        w1, h1 = b1[:, 2] - b1[:, 0], b1[:, 3] - b1[:, 1]
        w2, h2 = nb[:, 2] - nb[:, 0], nb[:, 3] - nb[:, 1]
        eps = 1e-16
        ar = np.maximum(w2 / (h2 + eps), h2 / (w2 + eps))
        thr = 0.01 if len(seg) else 0.1
        keep = (w2 > 2) & (h2 > 2) & (w2 * h2 / (w1 * h1 + eps) > thr) & (ar < 100)
        return out, c[keep], nb[keep], seg[keep]

    def finish(self, img, c, b, seg, rec, train):
        np, cv2 = self.np, self.cv2
        h, w = img.shape[:2]
        if train and rec["flipud"]:
            seg[..., 1] = h - seg[..., 1]
        if train and rec["fliplr"]:
            seg[..., 0] = w - seg[..., 0]
        img, c, b, _ = Ref.finish(self, img, c, b, None, rec, train)
        # Format: polygons2masks_overlap((h, w), segments, downsample_ratio=4)
        nh, nw = h // 4, w // 4
        if len(seg) == 0:
            self.last_mask = np.zeros((nh, nw), np.uint8)
            return img, c, b, None
        masks = np.zeros((nh, nw), dtype=np.int32 if len(seg) > 255 else np.uint8)
        ms, areas = [], []
        for si in range(len(seg)):
            m = np.zeros((h, w), dtype=np.uint8)
            poly = np.asarray([seg[si].reshape(-1)], dtype=np.int32).reshape(1, -1, 2)
            cv2.fillPoly(m, poly, color=1)
            m = cv2.resize(m, (nw, nh))
            ms.append(m.astype(masks.dtype))
            areas.append(m.sum())
        index = np.argsort(-np.asarray(areas))
        ms = np.array(ms)[index]
        for i in range(len(seg)):
            masks = masks + ms[i] * (i + 1)
            masks = np.clip(masks, a_min=0, a_max=i + 1)
        self.last_mask = masks
        return img, c[index], b[index], None


def image_paths(data):
    out = []
    for root, _, files in os.walk(data):
        out += [os.path.join(root, f) for f in files
                if f.lower().endswith((".jpg", ".jpeg", ".png"))]
    return sorted(out)


def run_case(t, d, ref, np, cv2, source, paths, index, seed, epoch, imgsz, sets, train, tmp,
             stack):
    png = os.path.join(tmp, "s.png")
    args = [d, "sample", source, "--index", str(index), "--seed", str(seed), "--epoch",
            str(epoch), "--imgsz", str(imgsz), "--out", png, "--json",
            "--augment", "1" if train else "0"]
    args += ["--set", f"{sets},{stack}" if sets else stack]
    p = subprocess.run(args, capture_output=True, text=True)
    label = f"{os.path.basename(source)} index {index} seed {seed} epoch {epoch} {sets}"
    if not t.check(p.returncode == 0, f"{label}: {p.stderr.strip()}"):
        return 0, 0, 0
    got = json.loads(p.stdout.strip().splitlines()[-1])
    img, c, b, kp = ref.sample(paths, got["recipe"], train)
    mine = cv2.imread(png, cv2.IMREAD_COLOR)
    diff = int(np.count_nonzero(mine != img)) if mine.shape == img.shape else mine.size
    t.check(diff == 0, f"{label}: {diff} image bytes differ")
    gb = np.array(got["bboxes"], np.float32).reshape(-1, 4)
    gc = np.array(got["cls"], np.float32)
    ok = gb.shape == b.shape and np.array_equal(gb, b) and np.array_equal(gc, c.reshape(-1))
    if kp is not None:
        gk = np.array(got["keypoints"], np.float32).reshape(kp.shape) if ok else None
        ok = ok and np.array_equal(gk, kp.astype(np.float32))
    t.check(ok, f"{label}: labels differ\n  detfeed {gb.tolist()[:4]}\n  reference {b.tolist()[:4]}")
    if isinstance(ref, SegRef):
        m = got.get("mask", {})
        rle = m.get("rle", [])
        mine = np.repeat(np.array(rle[0::2], np.uint8), np.array(rle[1::2], np.int64))
        want = ref.last_mask
        same = (m.get("height"), m.get("width")) == want.shape and mine.size == want.size \
            and np.array_equal(mine.reshape(want.shape), want)
        bad = int(np.count_nonzero(mine.reshape(want.shape) != want)) if mine.size == want.size \
            else want.size
        ref.mask_stats[0] += want.size
        ref.mask_stats[1] += bad
        t.check(same, f"{label}: {bad} mask bytes differ")
    return img.size, diff, len(b)


def main():
    args = ou.parse_args()
    cv2, np = ou.require_cv2()
    cv2.setNumThreads(1)
    t = ou.Counter("test_augment_oracle")
    d, data = args.detfeed, args.data
    flip = [0, 2, 1, 4, 3, 6, 5, 8, 7, 10, 9, 12, 11, 14, 13, 16, 15]
    seg_ref = SegRef(cv2, np, 640)
    seg_ref.mask_stats = [0, 0]
    cases = [
        ("coco128", Ref(cv2, np, 640), 24, ""),
        ("coco128", Ref(cv2, np, 320), 8, "mosaic=0.5,degrees=30,shear=5,scale=0.9,flipud=0.5"),
        ("coco128", Ref(cv2, np, 640), 6, "perspective=0.0008,degrees=10"),
        ("coco128", Ref(cv2, np, 320), 10, "mixup=0.7,mosaic=0.6,degrees=5"),
        ("coco8-pose/coco8-pose.yaml", Ref(cv2, np, 640, 17, 3, flip), 6, "flipud=0.5"),
        ("coco8-seg/coco8-seg.yaml", seg_ref, 8, "degrees=25,flipud=0.5,shear=3"),
        ("coco8-seg/coco8-seg.yaml", seg_ref, 4, "mosaic=0.5,perspective=0.0005,mixup=0.5"),
    ]
    # This re-implementation follows Ultralytics 8.3 on OpenCV 4.x with
    # NumPy 1's arithmetic and this NumPy's argsort (the rect order), a stack
    # detfeed keeps as settings; the real 8.4 is checked in tests/conformance.
    sys.path.insert(0, os.path.abspath(ou.PYTHON_DIR))
    from detfeed import stack as detected
    sort = detected.numpy_sort(np)
    stack = "ultralytics=8.3,opencv=4-debian,numpy=1"
    if sort is not None:
        stack += ",numpy_sort=" + sort
    total = differ = instances = samples = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, ref, n, sets in cases:
            source = os.path.join(data, name)
            if name.endswith(".yaml"):  # the train split of a YAML
                paths = image_paths(os.path.join(os.path.dirname(source), "images", "train"))
            else:
                paths = image_paths(source)
            for k in range(n):
                idx = (k * 37) % len(paths)
                for train in (True, False) if k < 2 else (True,):
                    a, b, n_inst = run_case(t, d, ref, np, cv2, source, paths, idx, 1000 + k,
                                            k % 3, ref.s, sets, train, tmp, stack)
                    total, differ = total + a, differ + b
                    instances, samples = instances + n_inst, samples + 1
        # Validation: rect batch shapes over the whole coco128 order (skipped
        # where detfeed cannot name this NumPy's argsort).
        ref = Ref(cv2, np, 640)
        source = os.path.join(data, "coco128")
        paths = image_paths(source)
        if sort is None:
            print("note: NumPy %s's argsort is not one detfeed reproduces; the rect "
                  "validation samples are not compared" % np.__version__)
        for idx in range(0, len(paths), 9) if sort is not None else ():
            a, b, n_inst = run_case(t, d, ref, np, cv2, source, paths, idx, 0, 0, 640, "",
                                    False, tmp, stack)
            total, differ = total + a, differ + b
            instances, samples = instances + n_inst, samples + 1
    print(f"{samples} samples, {instances} instances compared; {total} image bytes "
          f"compared, {differ} differ")
    print(f"segment masks: {seg_ref.mask_stats[0]} mask bytes compared, "
          f"{seg_ref.mask_stats[1]} differ")
    t.check(instances > 10 * samples, "too few instances survived to test the labels")
    t.finish()


if __name__ == "__main__":
    main()
