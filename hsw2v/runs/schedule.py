"""The learning-rate schedule and the epoch-loss account, shared by local and
Dask training."""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class LearningRate:
    """word2vec.c's schedule: the rate falls linearly from ``alpha`` to ``min_alpha``
    over ``planned`` words (all epochs), and stays at ``min_alpha`` after."""

    alpha: float
    min_alpha: float
    planned: int

    def at(self, words: int) -> float:
        """The learning rate after ``words`` words trained."""
        return max(self.min_alpha, self.alpha - (self.alpha - self.min_alpha) * words / self.planned)


@dataclass
class EpochLoss:
    """Each epoch's sum of −log P and number of examples (the lists a checkpoint's
    position holds, shared, not copied)."""

    loss_sum: list[float]
    examples: list[int] = field(default_factory=list)

    @classmethod
    def empty(cls, epochs: int) -> EpochLoss:
        return cls([0.0] * epochs, [0] * epochs)

    def add(self, epoch: int, loss: float, examples: int) -> None:
        self.loss_sum[epoch] += loss
        self.examples[epoch] += examples
        if examples:
            self._latest = max(self._latest, epoch)

    def mean(self, epoch: int) -> float:
        """Epoch ``epoch``'s mean −log P per example (0 before any example)."""
        return self.loss_sum[epoch] / max(self.examples[epoch], 1)

    def means(self) -> list[float]:
        """Every epoch's mean −log P per example."""
        return [self.mean(e) for e in range(len(self.loss_sum))]

    def __post_init__(self) -> None:
        self._latest = max((e for e, n in enumerate(self.examples) if n), default=0)

    def latest(self) -> tuple[int, float]:
        """The latest epoch with examples and its running mean (NaN if none has any),
        in constant time (the progress bar asks after every block)."""
        epoch = self._latest
        return epoch, self.loss_sum[epoch] / self.examples[epoch] if self.examples[epoch] else float("nan")

    @property
    def total_examples(self) -> int:
        return sum(self.examples)
