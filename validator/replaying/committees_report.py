"""``committees.json``, the report of ``validator whatif/replay --committee-size``, as a typed document.

``validator.replaying.committee_whatif.committee_whatif`` folds the selected stored rounds twice, as stored and
split into committees; ``CommitteesFile.of`` turns its result into this file, which the command writes
at OUT/committees.json (schema ``consensus-validator/whatif-committees/1``) and ``CommitteesFile.read``
reads back, naming the file and the first field that is not what it should be (``CommitteesFileError``,
a ``ValueError``). Per miner (``CommitteeMiner``, highest weight with committees first): its weight and
emission units as stored and with committees.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from validator.records.json_document import decode, plain, read_json, schema_of

if TYPE_CHECKING:
    from validator.replaying.committee_whatif import CommitteeWhatIf

SCHEMA = "consensus-validator/whatif-committees/1"


class CommitteesFileError(ValueError):
    """A document that is not a readable ``committees.json``; the message names the file and the field."""


@dataclass(frozen=True)
class CommitteeMiner:
    """One miner after the selected rounds: final weight and emission units, as stored and with committees."""

    miner: str  # its hotkey
    weight_before: float  # final weight with the rounds as stored (one tick per round)
    weight_after: float  # final weight with each round split into committees
    units_before: int  # emission units paid over the rounds as stored
    units_after: int  # emission units paid over the committees


@dataclass(frozen=True)
class CommitteesFile:
    """The stored ``committees.json`` (module docstring)."""

    committee_size: int  # the committee size asked for (each committee has about this many members)
    rounds: int  # stored rounds split
    committees: int  # committees evaluated
    miners: tuple[CommitteeMiner, ...] = ()

    @classmethod
    def of(cls, result: CommitteeWhatIf) -> CommitteesFile:
        return cls(
            result.committee_size,
            result.rounds,
            result.committees,
            tuple(CommitteeMiner(*row) for row in result.rows()),
        )

    def to_json(self) -> dict[str, Any]:
        return {"schema": SCHEMA, **plain(self)}

    @classmethod
    def from_json(cls, doc: Any, where: str = "committees.json") -> CommitteesFile:
        """A ``committees.json`` document; ``CommitteesFileError`` naming ``where`` and the first wrong field."""
        body = schema_of(doc, SCHEMA, where, CommitteesFileError, "a committees.json")
        return decode(cls, {k: v for k, v in body.items() if k != "schema"}, where, CommitteesFileError)

    @classmethod
    def read(cls, path: str | Path) -> CommitteesFile:
        """The file at ``path``; ``CommitteesFileError`` naming it when it cannot be read or is malformed."""
        return cls.from_json(read_json(path, CommitteesFileError), str(path))
