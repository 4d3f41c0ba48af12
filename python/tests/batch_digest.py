"""The digest the Python tests compare loaders by: the one `detfeed replay
--sha256` prints (tools/cmd_replay.c, hash_batch), so that a Loader's
batches can be compared with the tool's too."""
import hashlib

import numpy as np


def update_labels(h, b):
    """What the tool hashes of batch `b` after its images: cls, bboxes,
    batch_idx and keypoints as float32 (when the batch has instances), then
    for segment data the masks' height, width and element size (1 or 4) as
    int32 and the masks' bytes."""
    if len(b["cls"]):
        for k in ("cls", "bboxes", "batch_idx", "keypoints"):
            if k in b:
                h.update(np.asarray(b[k], np.float32).tobytes())
    if "masks" in b:
        m = np.ascontiguousarray(np.asarray(b["masks"]))
        h.update(np.array([m.shape[1], m.shape[2], m.itemsize], np.int32).tobytes())
        h.update(m.tobytes())


def update(h, b):
    """Batch `b` (NumPy arrays) as the tool hashes it: its images, then
    update_labels."""
    h.update(np.ascontiguousarray(b["img"]).tobytes())
    update_labels(h, b)


def digest(loader, epochs=2):
    """Every batch (update) of `epochs` epochs, in order."""
    h = hashlib.sha256()
    for e in range(epochs):
        loader.set_epoch(e)
        for b in loader:
            update(h, b)
    return h.hexdigest()
