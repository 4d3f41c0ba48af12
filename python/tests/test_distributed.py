"""torch.distributed: two processes with a gloo process group on the CPU,
each with its own loader taking rank and world size from the group. Their
shards must be disjoint, together cover every epoch, and each must be what a
single process with that rank set by hand receives."""
import hashlib
import json
import os
import socket

import pytest

torch = pytest.importorskip("torch")
dist = pytest.importorskip("torch.distributed")
if not dist.is_available() or not dist.is_gloo_available():
    pytest.skip("torch.distributed with gloo is not available", allow_module_level=True)

from test_loader import data  # noqa: E402

EPOCHS = 2


def files_and_digest(loader, epoch):
    loader.set_epoch(epoch)
    files, h = [], hashlib.sha256()
    for b in loader:
        files += b["im_file"]
        h.update(b["img"].numpy().tobytes())
    return files, h.hexdigest()


def group_arguments(detfeed, path, rank, world, early):
    """What the loader takes from the group: the one of rank and world_size
    not given; validation refused with the group's world size; a loader
    made before the group (`early`) warns at its first iteration."""
    import warnings
    kw = dict(imgsz=64, batch=4, workers=1, tensors="torch")
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        next(iter(early))
    early.close()
    with detfeed.Loader(path, world_size=world, **kw) as a, \
            detfeed.Loader(path, rank=rank, **kw) as b:
        got = {"early_warned": any("before torch.distributed" in str(w.message)
                                   for w in said),
               "only_world_size": [a.rank, a.world_size], "only_rank": [b.rank, b.world_size]}
    try:
        detfeed.Loader(path, augment=False, **kw)
        got["validation"] = "accepted"
    except ValueError as e:
        got["validation"] = str(e)
    return got


def rank_main(rank, world, port, path, out):
    import detfeed
    early = detfeed.Loader(path, imgsz=64, batch=4, workers=1, tensors="torch")
    dist.init_process_group("gloo", init_method="tcp://127.0.0.1:%d" % port, rank=rank,
                            world_size=world)
    with detfeed.Loader(path, imgsz=64, batch=4, workers=1, seed=3, epochs=EPOCHS,
                        tensors="torch") as loader:
        got = {"rank": loader.rank, "world_size": loader.world_size,
               "epochs": [files_and_digest(loader, e) for e in range(EPOCHS)]}
    got.update(group_arguments(detfeed, path, rank, world, early))
    everything = [None] * world
    dist.all_gather_object(everything, got)
    if rank == 0:
        with open(out, "w") as f:
            json.dump(everything, f)
    dist.destroy_process_group()


def test_two_gloo_ranks_take_disjoint_shards_that_cover_the_epoch(tmp_path):
    import detfeed
    path = data("detect").replace("coco8/coco8.yaml", "coco128/coco128.yaml")
    if not os.path.exists(path):
        pytest.skip("no coco128")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    out = str(tmp_path / "ranks.json")
    torch.multiprocessing.spawn(rank_main, args=(2, port, path, out), nprocs=2, join=True)
    ranks = json.load(open(out))
    assert [r["rank"] for r in ranks] == [0, 1] and all(r["world_size"] == 2 for r in ranks)
    for rank, r in enumerate(ranks):  # the argument not given comes from the group
        assert r["only_world_size"] == [rank, 2] and r["only_rank"] == [rank, 2]
        assert r["early_warned"], "a loader made before the group did not say so"
        assert "world_size is 2 (torch.distributed's process group)" in r["validation"]
    everything = detfeed.Loader(path, imgsz=64, batch=4, tensors="torch").dataset.im_files
    for e in range(EPOCHS):
        a, b = ranks[0]["epochs"][e][0], ranks[1]["epochs"][e][0]
        assert len(a) == len(b) == 64
        assert not set(a) & set(b)
        assert sorted(a + b) == sorted(everything)
    assert ranks[0]["epochs"][0][0] != ranks[0]["epochs"][1][0]  # a new order each epoch
    for rank in (0, 1):  # the same bytes as one process with the rank set by hand
        with detfeed.Loader(path, imgsz=64, batch=4, workers=1, seed=3, epochs=EPOCHS,
                            rank=rank, world_size=2, tensors="torch") as alone:
            for e in range(EPOCHS):
                assert files_and_digest(alone, e) == tuple(ranks[rank]["epochs"][e])
