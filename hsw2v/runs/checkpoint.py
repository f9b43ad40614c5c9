"""Checkpoints: the full state of a training run, saved so that a run killed at any
point resumes from its last checkpoint (``hsw2v train … --resume PATH``).

A checkpoint is a model file (see :mod:`hsw2v.model.model`: it loads as a model too)
with one more zip member, ``checkpoint.json``: where the run stands (:class:`Position`)
and, from the command line, the files the run writes at its end (``outputs``), which
a resumed run writes too.
It is taken at a block boundary, once every queued block has been trained, so the
weights, each thread's generator and the loss sums agree with each other. With
one thread, a resumed run trains exactly as the uninterrupted one would.
"""
from __future__ import annotations

import json
import sys
import time
import zipfile
from dataclasses import asdict, dataclass, field

from ..errors import HSW2VError, param
from ..model.model import Model
from ..model.reading import load_model
from ..settings import TrainSettings
from ..system.files import atomic_write

CHECKPOINT_FORMAT = "hsw2v-checkpoint"
CHECKPOINT_MEMBER = "checkpoint.json"
MAX_POSITION_BYTES = 16 << 20
"""The position is a few numbers per epoch and per thread; a larger member is refused."""


@dataclass
class Position:
    """Where a training run stands: the epoch under way, the non-empty blocks of it
    trained and their words, the words trained over all epochs (the learning-rate
    schedule's clock), each epoch's loss sum and examples, and each thread's
    generator state. ``per_epoch`` is the schedule's words per epoch; ``exact``
    says it is a count of this corpus (each epoch is then checked against it)."""

    per_epoch: int
    exact: bool
    epoch: int = 0
    blocks: int = 0
    epoch_words: int = 0
    words: int = 0
    loss_sum: list[float] = field(default_factory=list)
    examples: list[int] = field(default_factory=list)
    rng: list[int] = field(default_factory=list)
    round_slices: int = 0  # --engine dask: slices a round (``blocks`` counts slices)

    def check(self, epochs: int) -> None:
        """HSW2VError unless every field has a type and range a run could give."""
        ints = (self.per_epoch, self.epoch, self.blocks, self.epoch_words, self.words,
                self.round_slices, *self.examples, *self.rng)
        ok = (all(isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in ints)
              and isinstance(self.exact, bool)
              and all(isinstance(x, float) for x in self.loss_sum)
              and len(self.loss_sum) == len(self.examples) == epochs
              and all(x < 2**64 for x in self.rng)
              and (1 if not self.round_slices else 0) <= len(self.rng) <= 1 << 16
              and self.epoch <= epochs and self.epoch_words <= self.words
              and self.words <= epochs * self.per_epoch)
        if not ok:
            raise HSW2VError("corrupt checkpoint (its training position is out of range)")


def save_checkpoint(path: str, model: Model, position: Position,
                    outputs: dict[str, str | None] | None = None,
                    then: TrainSettings | None = None) -> None:
    """Write the model, the run's position and its ``outputs`` (what the run writes
    at its end, by option: ``{"-o": "v.txt", "--save-model": None}``) to ``path``,
    atomically. ``then``: the run's settings, when ``model`` is the first pass a
    tree is learned from (:func:`tree_pass_of`)."""
    record = json.dumps({"format": CHECKPOINT_FORMAT, **asdict(position),
                         "outputs": outputs or {},
                         **({"then": then.record()} if then is not None else {})}).encode()
    with atomic_write(path, "wb") as f:
        model.write(f, extra={CHECKPOINT_MEMBER: record})


def load_checkpoint(path: str) -> tuple[Model, Position]:
    """The model and position saved by :func:`save_checkpoint`, both checked."""
    model = load_model(path)
    record = _record(path)
    record.pop("outputs", None)
    record.pop("then", None)
    try:
        position = Position(**record)
        position.check(model.settings.epochs)
    except (TypeError, HSW2VError):
        raise HSW2VError(f"{path}: corrupt checkpoint (its training position is out of range)") from None
    return model, position


def checkpoint_outputs(path: str) -> dict[str, str | None]:
    """The files, by option, that the run saved in checkpoint ``path`` writes at its
    end (``{}`` for a checkpoint saved from Python or by an older hsw2v)."""
    outputs = _record(path).get("outputs") or {}
    if not (isinstance(outputs, dict) and all(isinstance(k, str) and (v is None or isinstance(v, str))
                                               for k, v in outputs.items())):
        raise HSW2VError(f"{path}: corrupt checkpoint (its outputs are not file names)")
    return outputs


def tree_pass_of(path: str) -> TrainSettings | None:
    """The settings of the run whose first pass, on a Huffman tree, checkpoint
    ``path`` holds (its tree is learned from that pass once it ends); None for a
    checkpoint of the run's own epochs."""
    then = _record(path).get("then")
    if then is None:
        return None
    try:
        return TrainSettings.from_record(then).resolved()
    except HSW2VError as e:
        raise HSW2VError(f"{path}: corrupt checkpoint (the run's settings: {e})") from None


def say_resuming(path: str, position: Position, epochs: int, stage: str = "") -> None:
    """Say on stderr where a resumed run takes up the run saved in ``path`` (in
    ``stage``, when that is not the run's own epochs)."""
    within = f" in {stage}" if stage else ""
    if position.epoch >= epochs:
        done = f"{stage} is done" if stage else (f"its {epochs} epochs are done, nothing is left "
                                                 "to train")
        sys.stderr.write(f"hsw2v: resuming {path}: {done}\n")
        return
    into = f", {position.epoch_words:,} words into it" if position.epoch_words else ""
    sys.stderr.write(f"hsw2v: resuming {path}{within} at epoch {position.epoch + 1} of "
                     f"{epochs}{into}\n")


def _record(path: str) -> dict:
    """The checkpoint member of ``path``, parsed (not yet checked)."""
    try:
        with zipfile.ZipFile(path) as z:
            if CHECKPOINT_MEMBER not in z.namelist():
                raise HSW2VError(f"{path}: a model, not a checkpoint (train with {param('checkpoint')})")
            if z.getinfo(CHECKPOINT_MEMBER).file_size > MAX_POSITION_BYTES:
                raise HSW2VError(f"{path}: corrupt checkpoint (its position is too large)")
            record = json.loads(z.read(CHECKPOINT_MEMBER).decode())
    except HSW2VError:
        raise
    except Exception:  # noqa: BLE001 (a damaged member: zip, UTF-8 or JSON errors)
        raise HSW2VError(f"{path}: corrupt checkpoint (unreadable position)") from None
    if not isinstance(record, dict) or record.pop("format", None) != CHECKPOINT_FORMAT:
        raise HSW2VError(f"{path}: not an hsw2v checkpoint")
    return record


class Checkpoints:
    """When and where a run saves its checkpoints: every ``minutes`` (0: after every
    block) and at the end of each epoch."""

    def __init__(self, path: str, minutes: float, outputs: dict[str, str | None] | None = None):
        if not minutes >= 0:
            raise HSW2VError(f"{param('checkpoint_every')} must be ≥ 0 minutes, got {minutes}")
        self.path = path
        self.outputs = outputs
        self.then: TrainSettings | None = None
        """While a first pass trains: the run's settings (saved with it)."""
        self.seconds = 60.0 * minutes
        self.last = time.monotonic()

    def due(self) -> bool:
        return time.monotonic() - self.last >= self.seconds

    def save(self, model: Model, position: Position) -> None:
        save_checkpoint(self.path, model, position, self.outputs, self.then)
        self.last = time.monotonic()
