"""Emissions: how one round's reward pool is split among miners (pure)."""

from emissions.allocate import Allocation, allocate, top_bonus
from emissions.config import EmissionsConfig

__all__ = ["Allocation", "EmissionsConfig", "allocate", "top_bonus"]
