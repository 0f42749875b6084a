"""The local model on ONNX Runtime gives the vectors torch gives; its export is made once, checked,
reused, made again when broken, and when it cannot be made the model runs on torch."""

from __future__ import annotations

import logging
import threading
import time

import pytest

from materials import embeddings, local_encoders

TEXTS = [
    "students stopped submitting homework",
    "請比較學習分析與布魯姆分類法在課程設計中的角色",
    "Bloom 分類法 and learning analytics 學習分析 in one sentence",
    "word " * 400,  # past the model's 256 word pieces: both truncate at the same place
    "",
    "RRF",
]


@pytest.fixture(scope="module")
def torch_vectors():
    return local_encoders.TorchEncoder(threads=1, batch_size=64).encode(TEXTS)


def _worst(a, b):
    return max(abs(x - y) for ra, rb in zip(a, b) for x, y in zip(ra, rb))


def test_the_onnx_encoder_gives_the_vectors_torch_gives(settings, torch_vectors):
    encoder = local_encoders.load(
        "onnx", 1, 2, settings.UEDU_EMBEDDING_CACHE_DIR
    )  # batches of 2: padded, reordered
    assert encoder.runtime == "onnx"
    vectors = encoder.encode(TEXTS)
    assert [len(v) for v in vectors] == [384] * len(TEXTS)
    assert _worst(vectors, torch_vectors) < 1e-5
    assert _worst([encoder.encode([text])[0] for text in TEXTS], torch_vectors) < 1e-5  # alone as in a batch


def test_the_local_backend_runs_on_onnx_unless_told_torch(monkeypatch, settings):
    monkeypatch.setattr(embeddings, "_backends", {})
    embeddings.embed_texts(["warm"])
    assert embeddings.get_backend()._model.runtime == "onnx"
    settings.UEDU_EMBEDDING_LOCAL_RUNTIME = "torch"
    monkeypatch.setattr(embeddings, "_backends", {})
    embeddings.embed_texts(["warm"])
    assert embeddings.get_backend()._model.runtime == "torch"


def test_the_export_is_made_once_then_reused(tmp_path, monkeypatch):
    first = local_encoders.load("onnx", 1, 8, tmp_path)
    made = local_encoders.export_path(tmp_path)
    assert (
        first.runtime == "onnx"
        and made.exists()
        and sorted(p.name for p in tmp_path.iterdir()) == sorted([made.name, "export.lock"])
    )
    stamp = made.stat().st_mtime_ns

    import torch

    def no_export(*args, **kwargs):
        raise AssertionError("exported again")

    monkeypatch.setattr(torch.onnx, "export", no_export)
    again = local_encoders.load("onnx", 1, 8, tmp_path)
    assert again.runtime == "onnx" and made.stat().st_mtime_ns == stamp
    assert _worst(again.encode(TEXTS[:2]), first.encode(TEXTS[:2])) == 0


def test_a_broken_export_on_disk_is_made_again(tmp_path, torch_vectors):
    broken = local_encoders.export_path(tmp_path)
    broken.write_bytes(b"half a file")
    encoder = local_encoders.load("onnx", 1, 8, tmp_path)
    assert encoder.runtime == "onnx" and broken.stat().st_size > 1_000_000
    assert _worst(encoder.encode(TEXTS), torch_vectors) < 1e-5


def test_an_export_that_differs_from_torch_is_not_kept_and_the_model_runs_on_torch(
    tmp_path, monkeypatch, caplog, torch_vectors
):
    monkeypatch.setattr(local_encoders, "EXPORT_TOLERANCE", -1.0)  # no export can pass the check
    with caplog.at_level(logging.WARNING, logger="materials.local_encoders"):
        encoder = local_encoders.load("onnx", 1, 8, tmp_path)
    assert encoder.runtime == "torch"
    assert [p.name for p in tmp_path.iterdir()] == [
        "export.lock"
    ]  # neither the export nor its scratch file is left
    assert "runs on torch" in caplog.text and "differs from torch" in caplog.text
    assert _worst(encoder.encode(TEXTS), torch_vectors) < 1e-6


def test_an_unwritable_cache_falls_back_to_torch(tmp_path, caplog):
    blocked = tmp_path / "not-a-directory"
    blocked.write_text("a file where the cache directory should be")
    with caplog.at_level(logging.WARNING, logger="materials.local_encoders"):
        encoder = local_encoders.load("onnx", 1, 8, blocked)
    assert encoder.runtime == "torch" and "runs on torch" in caplog.text
    assert len(encoder.encode(["still answers"])[0]) == 384


def test_processes_starting_together_export_once_and_the_others_read_it(tmp_path, monkeypatch):
    exports, inside = [], threading.Event()

    def slow_export(target):  # stands in for the ~6 s export: the lock is what is under test
        exports.append(target)
        inside.set()
        time.sleep(0.5)
        target.write_bytes(b"exported")

    monkeypatch.setattr(local_encoders, "_export", slow_export)
    paths = []
    first = threading.Thread(target=lambda: paths.append(local_encoders.export_onnx(tmp_path)))
    first.start()
    assert inside.wait(10)
    second = threading.Thread(
        target=lambda: paths.append(local_encoders.export_onnx(tmp_path))
    )  # arrives mid-export
    second.start()
    first.join(10)
    second.join(10)
    assert len(exports) == 1 and paths == [exports[0], exports[0]] and exports[0].read_bytes() == b"exported"
