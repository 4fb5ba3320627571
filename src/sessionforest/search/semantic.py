"""The semantic leg of T1: chats ranked by how close their entries are to the query's meaning.

Only with the `[semantic]` extra (search/embedder.py) and a backend that keeps
vectors (`Backend.vectors`); otherwise `Semantic.open` returns None and the
funnel runs exactly as without it.

Vectors are per entry (its indexed text, first 128 tokens), computed off the
append path: `catch_up` embeds what the store notes as pending in batches
(outside any transaction; each batch stored in one write), run by the
backend's maintenance thread once writes pause (`step`, the `VECTORS` job of
every writing Forest: imports, appends, a watcher's and a server's writes),
by `forest index --semantic` (the backfill for existing stores), and before a
search when at most `SEARCH_BUDGET` entries wait (a chat appended to a moment
ago); a larger backlog is left to those and the search uses the vectors
already there (`forest status` says how many entries wait).

A search embeds the query and scores every window of `WINDOW` consecutive
entries of a chat (one product over a per-process matrix of window vectors,
kept as int8 rows with a scale each and refreshed by what was stored since):
a window's vector is the normalised sum of its entries' vectors, made in
memory when they are loaded, so a turn is read with the few before it (a question and its answer, a
remark and what it refers to) and nothing more is embedded or stored. Chats
rank by their best window: a chat's place is that of its first window among
the best `TOP_ENTRIES`. That list is fused by reciprocal
rank like the lexical ones (search/retrieve.py); the gate never counts it as
evidence (search/find.py).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Final

from ..budget import Budgeted, MiB, text_bytes
from ..store.base import ChatKey, VectorStore
from . import embedder as models

SESSION_SHIFT: Final = 32  # chat key in the high bits of an entry key (every backend)
BATCH: Final = 256  # entries embedded and stored per write transaction
SEARCH_BUDGET: Final = 16  # pending entries a search embeds itself
TOP_ENTRIES: Final = 2_000  # best entries read for the chat ranking
CHATS: Final = 50  # chats the leg lists
# Below this cosine an entry says nothing of the query: unrelated sentences
# score about 0 to 0.15 on this model, a one-word query against "hello" 0.25,
# related ones 0.35 and up. Its chat is not listed for it.
MIN_COSINE: Final = 0.25
# Texts embedded lately, kept by text: chats repeat lines ("ok", "running the
# tests now"), and each is embedded once while it stays among these (bounded in
# bytes: an indexed text can be a 60 MB paste).
REMEMBERED_BYTES: Final = 8 * MiB
# The maintenance thread's job (store/base/maintenance.py): entries embedded per
# step (a closing store waits for at most one step: ~0.3 s on this machine's
# CPU), once writes have paused this long, so a burst of appends or an import
# runs at the speed it has without the leg and its vectors follow.
STEP: Final = 64
QUIET: Final = 0.25
# A window ends at each entry and holds it and the entries just before it in its
# chat (fewer at a chat's start). Measured against one vector per entry and
# against embedding each window's joined text (docs/semantic.md): the summed
# vectors keep most of what the joined text gains, for no embedding at all.
WINDOW: Final = 3
# Vectors read and turned into windows per step of a load (~12 MiB of float32).
LOAD_ROWS: Final = 8192
# The matrix keeps each window as int8 with a float32 scale per row (a quarter of
# float32's memory: 1M windows in 0.37 GiB instead of 1.43), and a search widens
# SCORE_ROWS rows at a time into one float32 buffer that stays in the CPU's L2
# cache (768 KiB): measured on this machine at 1M rows, as fast as one float32
# product over the whole matrix or faster (docs/benchmarks.md, section 13).
SCORE_ROWS: Final = 512
QUANT: Final = 127.0


class Semantic:
    """One store's semantic leg: its model and a copy of its vectors as one matrix."""

    def __init__(self, vectors: VectorStore) -> None:
        self._vectors = vectors
        self._loaded: models.Embedder | None = None
        self._remembered: Budgeted[str, tuple[str, bytes]] = Budgeted(
            REMEMBERED_BYTES, lambda kept: text_bytes(kept[0]) + len(kept[1])
        )
        self._lock = threading.Lock()  # the matrix
        self._embedding = threading.Lock()  # one catch-up at a time per Forest
        self._mark = 0
        # The first _count rows are in use; the arrays grow by doubling, so a
        # top-up of a few vectors writes them instead of copying every row.
        self._count = 0
        self._keys: Any = None  # int64 entry keys, one per row of _matrix
        self._matrix: Any = None  # int8 (n, dims): the window ending at each entry
        self._scales: Any = None  # float32 (n,): row i's window is _matrix[i] * _scales[i]
        # Per chat, the vectors of its last WINDOW - 1 entries loaded (the start of
        # the windows of its next entries).
        self._tails: dict[int, list[Any]] = {}

    @classmethod
    def open(cls, vectors: Callable[[], VectorStore | None]) -> Semantic | None:
        """The leg for a store, or None (no extra installed, or no vectors kept).
        `vectors` gives the backend's vector store, asked only when the leg is
        installed and on. The model loads when first needed (a query to embed,
        or entries)."""
        if not models.installed():
            return None
        store = vectors()
        return None if store is None else cls(store)

    @property
    def _model(self) -> models.Embedder:
        if self._loaded is None:
            # The switch was read when the leg was opened (Forest.open).
            model = models.load(switch=False)
            if model is None:
                raise RuntimeError("the [semantic] extra was uninstalled while in use")
            self._loaded = model
        return self._loaded

    # --- computing vectors --------------------------------------------------------

    def catch_up(
        self, limit: int | None = None, progress: Callable[[int], None] | None = None
    ) -> int:
        """Embed pending entries in batches until none is left (or `limit` were done);
        returns how many were embedded. Each batch is read, embedded outside any
        transaction and stored in one write; a failure leaves the earlier batches."""
        with self._embedding:
            return self._catch_up(limit, progress)

    def _catch_up(self, limit: int | None, progress: Callable[[int], None] | None) -> int:
        import numpy as np

        done_total = 0
        while limit is None or done_total < limit:
            size = BATCH if limit is None else min(BATCH, limit - done_total)
            pending = self._vectors.pending(models.MODEL_ID, size)
            if not pending.rows:
                if pending.idle:
                    self._vectors.put(models.MODEL_ID, [], [], pending.idle)
                break
            texts = [(key, text) for key, text in pending.rows if text.strip()]
            known = self._remembered
            batch: dict[str, bytes] = {}
            for _, text in texts:
                kept = known.get(text)
                if kept is not None:
                    batch[text] = kept[1]
            fresh = list(dict.fromkeys(text for _, text in texts if text not in batch))
            if fresh:
                embedded = self._model.embed(fresh)
                for text, row in zip(fresh, embedded, strict=True):
                    batch[text] = np.ascontiguousarray(row, dtype="<f4").tobytes()
                    known.put(text, (text, batch[text]))
            vectors = [(key, batch[text]) for key, text in texts]
            done = [key for key, _ in pending.rows]
            self._vectors.put(models.MODEL_ID, vectors, done, pending.idle)
            done_total += len(done)
            if progress is not None:
                progress(done_total)
        return done_total

    def step(self) -> bool:
        """One step of the maintenance thread's job: embed up to STEP pending entries;
        returns whether more may wait."""
        return self.catch_up(limit=STEP) >= STEP

    def freshen(self) -> int:
        """Before a search: embed what is pending when it is at most SEARCH_BUDGET
        entries; returns how many chats still wait (0: the vectors are complete)."""
        if not self._vectors.waiting():
            return 0
        pending = self._vectors.pending(models.MODEL_ID, SEARCH_BUDGET + 1)
        if len(pending.rows) <= SEARCH_BUDGET:
            self.catch_up(limit=SEARCH_BUDGET)
        return self._vectors.waiting()

    def waiting(self) -> int:
        """How many chats have entries without vectors."""
        return self._vectors.waiting()

    # --- ranking ------------------------------------------------------------------

    def _refresh(self) -> None:
        """Bring the matrix up to the stored vectors, LOAD_ROWS at a time: a first load
        of a million vectors holds one chunk's rows and windows besides the matrix,
        not all of them at once (several times the matrix's size)."""
        while self._refresh_some() == LOAD_ROWS:
            pass

    def _refresh_some(self) -> int:
        import numpy as np

        mark, rows = self._vectors.load(models.MODEL_ID, self._mark, LOAD_ROWS)
        if mark < self._mark:  # the vectors were dropped (another model): start again
            self._mark, self._keys, self._matrix, self._scales = 0, None, None, None
            self._count = 0
            self._tails = {}
            mark, rows = self._vectors.load(models.MODEL_ID, 0, LOAD_ROWS)
        if not rows:
            self._mark = mark
            return 0
        keys = np.fromiter((key for key, _ in rows), dtype=np.int64, count=len(rows))
        blob = b"".join(vector for _, vector in rows)
        entries = np.frombuffer(blob, dtype="<f4").reshape(len(rows), models.DIMENSIONS)
        quantised, scales = quantise(self._windows(keys, entries))
        used, size = self._count, len(rows)
        if self._matrix is None or used + size > len(self._matrix):
            # Half again, not double: at most a third of the rows kept are unused.
            rows_kept = max(used + size, used + used // 2)
            grown = np.empty((rows_kept, models.DIMENSIONS), dtype=quantised.dtype)
            grown_scales = np.empty(rows_kept, dtype=np.float32)
            grown_keys = np.empty(rows_kept, dtype=np.int64)
            if used:
                grown[:used], grown_keys[:used] = self._matrix[:used], self._keys[:used]
                grown_scales[:used] = self._scales[:used]
            self._matrix, self._keys, self._scales = grown, grown_keys, grown_scales
        self._matrix[used : used + size] = quantised
        self._scales[used : used + size] = scales
        self._keys[used : used + size] = keys
        self._count = used + size
        self._mark = mark
        return size

    def _windows(self, keys: Any, entries: Any) -> Any:
        """The window vector ending at each new entry: its vector plus those of the
        WINDOW - 1 entries before it in its chat (from this batch, or the last ones
        of the chat loaded earlier), normalised. Entries of a chat are stored in
        order, so the earlier ones are always loaded first."""
        import numpy as np

        # Loads come in the order the vectors were stored, which is mostly key
        # order already: then nothing is reordered (or copied) for it.
        ordered_already = bool(np.all(keys[1:] >= keys[:-1]))
        order = None if ordered_already else np.argsort(keys, kind="stable")
        chats = (keys if order is None else keys[order]) >> SESSION_SHIFT
        ordered = entries if order is None else entries[order]
        summed = np.array(ordered, dtype=np.float32)
        for back in range(1, WINDOW):
            same = chats[back:] == chats[:-back]
            np.add(summed[back:], ordered[:-back], out=summed[back:], where=same[:, None])
        # The first entries of a chat in this batch: add its tail from earlier loads.
        starts = np.flatnonzero(np.r_[True, chats[1:] != chats[:-1]])
        ends = np.r_[starts[1:], len(chats)]
        tails = self._tails
        for start, end in zip(starts.tolist(), ends.tolist(), strict=True):
            chat = int(chats[start])
            tail = tails.get(chat)
            if tail is not None:
                for back, vector in enumerate(reversed(tail), 1):
                    # The entry `back` before the batch's first one of this chat
                    # reaches the batch's first WINDOW - back entries.
                    reach = min(end, start + WINDOW - back)
                    summed[start:reach] += vector
            if WINDOW > 1:
                last = ordered[max(start, end - (WINDOW - 1)) : end]
                kept = [*(tail or ()), *last][-(WINDOW - 1) :]
                tails[chat] = [np.array(v) for v in kept]
        norms = np.sqrt(np.einsum("ij,ij->i", summed, summed))
        summed /= np.maximum(norms, 1e-12)[:, None]
        if order is None:
            return summed
        out = np.empty_like(summed)
        out[order] = summed
        return out

    def ranked(self, query: str, limit: int = CHATS) -> list[ChatKey]:
        """Chat keys, closest first, by their best window's cosine to `query`."""
        import numpy as np

        with self._lock:
            self._refresh()
            count, keys, matrix, scales = self._count, self._keys, self._matrix, self._scales
        if not count or not query.strip():
            return []
        # Rows below the count are never written again (a top-up writes past
        # it, or into a new array): these views stay whole after the lock.
        keys = keys[:count]
        scores = cosines(matrix[:count], scales[:count], self._model.embed([query])[0])
        top = min(TOP_ENTRIES, len(scores))
        best = np.argpartition(-scores, top - 1)[:top]
        best = best[np.argsort(-scores[best], kind="stable")]
        best = best[scores[best] >= MIN_COSINE]
        chats: list[ChatKey] = []
        seen: set[int] = set()
        for chat in (keys[best] >> SESSION_SHIFT).tolist():
            if chat not in seen:
                seen.add(chat)
                chats.append(int(chat))
                if len(chats) >= limit:
                    break
        return chats


def quantise(windows: Any) -> tuple[Any, Any]:
    """Unit vectors as int8 rows and a float32 scale each: row * scale is the vector
    to within half a step of its largest component (cosines off by < 0.003)."""
    import numpy as np

    peaks = np.maximum(windows.max(axis=1), -windows.min(axis=1))
    scales = (np.maximum(peaks, 1e-12) / QUANT).astype(np.float32)
    steps = np.multiply(windows, (1 / scales)[:, None], dtype=np.float32)
    return np.rint(steps, out=steps).astype(np.int8), scales


def cosines(matrix: Any, scales: Any, query: Any) -> Any:
    """The cosine of each int8 row (times its scale) with the float32 unit `query`:
    SCORE_ROWS rows at a time widened into one buffer that stays in cache."""
    import numpy as np

    count = len(matrix)
    scores = np.empty(count, dtype=np.float32)
    buffer = np.empty((min(SCORE_ROWS, count), matrix.shape[1]), dtype=np.float32)
    for start in range(0, count, SCORE_ROWS):
        block = matrix[start : start + SCORE_ROWS]
        widened = buffer[: len(block)]
        np.copyto(widened, block, casting="unsafe")
        np.dot(widened, query, out=scores[start : start + len(block)])
    scores *= scales
    return scores
