"""The factual stage: members that state different facts than the dominant cluster's central answers leave.

Embeddings measure topic, not truth ("boils at about 90 °C" sits beside
"boils at 100 °C"). The LM edge (``lm.factual``) asks, for each member of the
dominant cluster, whether it states the same facts as the cluster's central
answers (its two anchors), and hands the higher P(same facts) in
``Signals.factual_agreement`` (0..1). Here, after the polarity stage:

- a member whose agreement is below ``config.factual_min_agreement``
  contradicts the cluster and leaves consensus (reason ``factual``; like a
  polarity dissenter it earns nothing);
- unless the contradicting members are at least half of the checked ones:
  then the LM is confused or the cluster holds no common answer, and nobody
  is removed (a note says so). Members without a score (skipped by the LM
  budget, or the LM gave no yes/no) are never removed.
"""

from __future__ import annotations

import numpy as np

from consensus.stages import Context, Stage
from consensus.types import Reason


def factual(ctx: Context, alive: np.ndarray) -> Stage:
    """Members contradicting the centre, removed (the rules in the module docstring)."""
    scores = ctx.signals.factual_agreement
    if scores is None or not ctx.config.factual_check:
        return Stage()
    floor = ctx.config.factual_min_agreement
    checked = [int(i) for i in alive if int(i) in scores]
    low = [i for i in checked if scores[i] < floor]
    if not low:
        return Stage()
    if 2 * len(low) >= len(checked):
        return Stage(notes=(f"factual: {len(low)} of {len(checked)} checked members differ from the central answers; "
                            f"the cluster holds no common answer, nobody removed",))
    return Stage({i: (Reason.FACTUAL, f"states other facts than the central answers "
                                      f"(P(same facts) {scores[i]:.2f} < {floor:g})") for i in low})
