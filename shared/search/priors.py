"""Root priors from the evaluator's logits (`masked_softmax`) and the Dirichlet noise mixed into them at the
roots of self-play searches (`dirichlet_noise`)."""
from __future__ import annotations

import numpy as np


def masked_softmax(logits: np.ndarray, legal: np.ndarray) -> np.ndarray:
    """Softmax over legal actions only: logits [M, A] float, legal [M, A] bool -> priors [M, A] float32.

    Illegal actions get 0 and each row sums to 1 over its legal actions. NaN logits count as -inf and +inf as
    the largest float. A row without mass (every legal logit -inf or NaN) becomes uniform over its legal actions.
    """
    big = np.finfo(np.float32).max
    clean = np.nan_to_num(np.asarray(logits, np.float32), nan=-np.inf, posinf=big, neginf=-np.inf)
    masked = np.where(legal, clean, np.float32(-np.inf))
    row_max = masked.max(axis=1, keepdims=True)                        # [M, 1]
    no_mass = ~np.isfinite(row_max[:, 0])
    shifted = masked - np.where(np.isfinite(row_max), row_max, np.float32(0.0))
    weights = np.exp(shifted)                                          # [M, A] float32, 0 where illegal
    weights[no_mass] = legal[no_mass]
    total = weights.sum(axis=1, keepdims=True)
    return (weights / np.maximum(total, np.float32(1e-30))).astype(np.float32)


def dirichlet_noise(legal: np.ndarray, alpha: float, rng: np.random.Generator) -> np.ndarray:
    """Dirichlet(alpha) noise over each row's legal actions: legal [K, A] bool -> noise [K, A] float32 (0 if illegal).

    Sampled as normalised Gamma(alpha, 1) variables, which is the Dirichlet distribution over the legal subset.
    """
    gamma = rng.gamma(alpha, 1.0, size=legal.shape).astype(np.float32) * legal
    total = gamma.sum(axis=1, keepdims=True)
    # Gamma samples with a tiny alpha can all underflow to 0; fall back to uniform over legal moves then.
    empty = total[:, 0] <= 0
    gamma[empty] = legal[empty]
    total[empty] = legal[empty].sum(axis=1, keepdims=True)
    return gamma / total
