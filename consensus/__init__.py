"""The pure consensus core: filters, clustering, consensus score and composite scores.

A round goes ``embed`` (edge, injected) + ``Signals`` (collected by the edges) -> ``decide``
(pure, one pass of the stages in ``consensus.stages``) -> ``Evaluation``.
"""

from consensus.config import ConsensusConfig
from consensus.errors import ConfigError, EmbeddingError, RoundError
from consensus.pipeline import decide
from consensus.signals import Signals
from consensus.similarity import cosine_matrix
from consensus.types import ConsensusResult, Evaluation, Polarity, Reason, Response, ResponseResult, Round, ScoreParts

__all__ = [
    "ConfigError",
    "ConsensusConfig",
    "ConsensusResult",
    "EmbeddingError",
    "Evaluation",
    "Polarity",
    "Reason",
    "Response",
    "ResponseResult",
    "Round",
    "RoundError",
    "ScoreParts",
    "Signals",
    "cosine_matrix",
    "decide",
]
