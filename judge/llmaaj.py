"""LLM-as-a-judge: ask models the evaluation questions, have judges score the answers 1..5.

From ../shared/seeds/llm_as_judge.md. Three modes (``LlmaajConfig.mode``):
ask then judge, ask only (writes ``<model>-responses-<timestamp>.csv``), and
judge only (from such files). Each model is asked one at a time, its
questions concurrently; each judge scores every answer, concurrently.

One judgement (``judge_answer``, ``JudgeResult``) is ``judge.judgement``: checked
generation with the verdict parser of ``judge.verdict``, retried up to ``retries``
times. A judge that never answers validly leaves its row with an error and no score;
no row is dropped. ``judge_against_reference`` (the same judgement for a round's
miner answer against the round's reference) lives there too; all three are
re-exported here.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from tqdm import tqdm

from judge.config import LlmaajConfig
from judge.datasets import ModelAnswer, QnA, load_qna, load_responses
from judge.interrater import krippendorff_alpha, mean_kappa, pairwise_kappas
from judge.judgement import JudgeOptions, JudgeResult, judge_against_reference, judge_answer  # noqa: F401 - re-exported
from judge.outputs import csv_bytes, responses_path, write_json, write_table
from judge.templates import render, to_turns
from lm.client import ChatClient
from lm.errors import LMError
from storage.files import write_atomic

if TYPE_CHECKING:
    from typing_extensions import Unpack  # typing.Unpack from 3.11; requires-python is 3.10

SCORE_COLUMNS = (
    "question",
    "ground_truth",
    "model",
    "answer",
    "judge",
    "answer_score",
    "answer_score_reasoning",
    "error",
    "source",
)
SUMMARY_COLUMNS = (
    "model",
    "judge",
    "answers",
    "scored",
    "failed",
    "mean_score",
    "krippendorff_alpha",
    "weighted_kappa",
)
ALL = "(all judges)"


@dataclass(frozen=True)
class Participant:
    """A model or a judge, ready to call."""

    name: str
    client: ChatClient
    template: str


# -- asking -----------------------------------------------------------------------------------------


def ask_one(model: Participant, qna: QnA, *, max_tokens: int = 512, seed: int = 0) -> ModelAnswer:
    turns = to_turns(render(model.template, {"question": qna.question}))
    messages = ([{"role": "system", "content": turns.system}] if turns.system else []) + [
        {"role": "user", "content": turns.user}
    ]
    try:
        completion = model.client.complete(
            messages, max_tokens=max_tokens, temperature=0.0, seed=seed, prefill=turns.prefill
        )
    except LMError as exc:
        return ModelAnswer(qna, model.name, "", f"model call failed: {exc}")
    text = completion.text
    if turns.prefill and text.startswith(turns.prefill):  # llama.cpp returns the prefill with its continuation
        text = text[len(turns.prefill) :]
    return ModelAnswer(qna, model.name, text.strip())


def _pool_map(fn: Any, items: Sequence[Any], workers: int, desc: str, progress: bool) -> list[Any]:

    if not items:
        return []
    with ThreadPoolExecutor(max_workers=max(1, min(workers, len(items)))) as pool:
        return list(tqdm(pool.map(fn, items), total=len(items), desc=desc, disable=not progress))


def ask_models(
    models: Sequence[Participant],
    qnas: Sequence[QnA],
    *,
    workers: int = 4,
    max_tokens: int = 512,
    seed: int = 0,
    progress: bool = False,
) -> list[ModelAnswer]:
    """Every model's answer to every question: model after model, questions concurrently."""
    out: list[ModelAnswer] = []
    for model in models:
        out.extend(
            _pool_map(
                lambda q, m=model: ask_one(m, q, max_tokens=max_tokens, seed=seed),
                qnas,
                workers,
                f"ask {model.name}",
                progress,
            )
        )
    return out


# -- judging ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ScoreRow:
    question: str
    ground_truth: str
    model: str
    answer: str
    judge: str
    answer_score: int | None
    answer_score_reasoning: str
    error: str | None
    source: str
    attempts: int = 0

    def record(self) -> dict[str, Any]:
        return asdict(self)


def judge_responses(
    judges: Sequence[Participant],
    responses: Sequence[ModelAnswer],
    *,
    workers: int = 4,
    progress: bool = False,
    **options: Unpack[JudgeOptions],
) -> list[ScoreRow]:
    """One row per (response, judge), in response order; failures are rows with an error. ``options`` go to
    every ``judge_answer`` (retries, max_tokens, seed...)."""
    by_judge: dict[str, list[ScoreRow]] = {}
    for judge in judges:

        def one(r: ModelAnswer, j: Participant = judge) -> ScoreRow:
            base = dict(
                question=r.qna.question,
                ground_truth=r.qna.ground_truth,
                model=r.model,
                answer=r.answer,
                judge=j.name,
                source=r.qna.source,
            )
            if r.error:
                return ScoreRow(**base, answer_score=None, answer_score_reasoning="", error=f"not judged: {r.error}")
            result = judge_answer(j.client, j.template, r.qna.question, r.qna.ground_truth, r.answer, **options)
            return ScoreRow(
                **base,
                answer_score=result.quality,
                answer_score_reasoning=result.reasoning,
                error=result.error,
                attempts=len(result.raw),
            )

        by_judge[judge.name] = _pool_map(one, responses, workers, f"judge {judge.name}", progress)
    return [by_judge[j.name][i] for i in range(len(responses)) for j in judges]


def _mean(values: Sequence[float]) -> float | None:
    return float(np.mean(values)) if values else None


def _agreement(
    rows: Sequence[ScoreRow], judges: Sequence[str]
) -> tuple[float | None, float | None, dict[tuple[str, str], float | None]]:
    items: dict[tuple[str, str], dict[str, float]] = {}
    for row in rows:
        items.setdefault((row.source, row.model), {})[row.judge] = (
            np.nan if row.answer_score is None else float(row.answer_score)
        )
    if len(judges) < 2 or not items:
        return None, None, {}
    ratings = np.array([[item.get(j, np.nan) for item in items.values()] for j in judges], dtype=float)
    kappas = pairwise_kappas(ratings, judges)
    return krippendorff_alpha(ratings), mean_kappa(kappas), kappas


def summarise(rows: Sequence[ScoreRow], models: Sequence[str], judges: Sequence[str]) -> list[dict[str, Any]]:
    """Per model: each judge's mean score and the mean over judges with the judges' agreement next to it."""
    table: list[dict[str, Any]] = []
    for model in [*models, None]:
        mine = [r for r in rows if model is None or r.model == model]
        if model is not None:
            for judge in judges:
                scored = [r.answer_score for r in mine if r.judge == judge and r.answer_score is not None]
                total = sum(1 for r in mine if r.judge == judge)
                table.append(
                    {
                        "model": model,
                        "judge": judge,
                        "answers": total,
                        "scored": len(scored),
                        "failed": total - len(scored),
                        "mean_score": _mean(scored),
                        "krippendorff_alpha": None,
                        "weighted_kappa": None,
                    }
                )
        alpha, kappa, _ = _agreement(mine, judges)
        scored = [r.answer_score for r in mine if r.answer_score is not None]
        table.append(
            {
                "model": model if model is not None else "(all models)",
                "judge": ALL,
                "answers": len(mine),
                "scored": len(scored),
                "failed": len(mine) - len(scored),
                "mean_score": _mean(scored),
                "krippendorff_alpha": alpha,
                "weighted_kappa": kappa,
            }
        )
    return table


# -- a whole run ------------------------------------------------------------------------------------


@dataclass
class RunResult:
    responses: list[ModelAnswer]
    rows: list[ScoreRow]
    summary: list[dict[str, Any]]
    files: list[Path]
    usage: dict[str, dict[str, dict[str, int]]]

    @property
    def failures(self) -> int:
        return sum(1 for r in self.responses if r.error) + sum(1 for r in self.rows if r.answer_score is None)


def load_inputs(config: LlmaajConfig) -> tuple[list[QnA], list[ModelAnswer]]:
    """Questions and response files, read and checked before any model is called."""
    qnas = load_qna(config.input_qna) if config.models else []
    loaded = load_responses(config.input_responses) if config.input_responses else []
    return qnas, loaded


RESPONSE_COLUMNS_EXTRA = ("error",)


def write_responses(out_dir: Path, model: str, responses: Sequence[ModelAnswer], when: datetime) -> Path:
    """The seed's intermediate file: question, ground_truth, "<model> answer" (and why an answer is missing)."""
    column = f"{model} answer"
    rows = [
        {"question": r.qna.question, "ground_truth": r.qna.ground_truth, column: r.answer, "error": r.error}
        for r in responses
    ]
    path = responses_path(out_dir, model, when)
    write_atomic(path, csv_bytes(("question", "ground_truth", column, *RESPONSE_COLUMNS_EXTRA), rows))
    return path


def _usage(participants: Sequence[Participant]) -> dict[str, dict[str, int]]:
    out = {}
    for p in participants:
        meter = getattr(p.client, "meter", None)
        if meter is not None:
            out[p.name] = meter.snapshot()
    return out


def run(
    config: LlmaajConfig,
    models: Sequence[Participant],
    judges: Sequence[Participant],
    qnas: Sequence[QnA],
    loaded: Sequence[ModelAnswer],
    *,
    now: datetime,
    progress: bool = False,
) -> RunResult:
    """Ask, judge, write every output file; ``now`` stamps the responses files."""
    out_dir = Path(config.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    files: list[Path] = []
    asked = (
        ask_models(models, qnas, workers=config.workers, max_tokens=config.answer_max_tokens, progress=progress)
        if models
        else []
    )
    for model in models:
        files.append(write_responses(out_dir, model.name, [r for r in asked if r.model == model.name], now))
    responses = [*asked, *loaded]
    rows: list[ScoreRow] = []
    summary: list[dict[str, Any]] = []
    if judges:
        rows = judge_responses(
            judges,
            responses,
            workers=config.workers,
            retries=config.retries,
            max_tokens=config.judge_max_tokens,
            progress=progress,
        )
        model_names = list(dict.fromkeys(r.model for r in responses))
        summary = summarise(rows, model_names, [j.name for j in judges])
        records = [r.record() for r in rows]
        for fmt in config.score_output_format:
            files.append(
                write_table(out_dir, fmt, SCORE_COLUMNS, records, extra_sheets={"summary": (SUMMARY_COLUMNS, summary)})
            )
    usage = {"models": _usage(models), "judges": _usage(judges)}
    pairs = _agreement(rows, [j.name for j in judges])[2] if judges else {}
    files.append(
        write_json(
            out_dir / "summary.json",
            {
                "mode": config.mode,
                "models": list(dict.fromkeys(r.model for r in responses)),
                "judges": [j.name for j in judges],
                "summary": summary,
                "agreement": {
                    "krippendorff_alpha": "ordinal",
                    "weighted_kappa": "quadratic weights, mean over pairs",
                    "pairwise_weighted_kappa": [{"judges": list(k), "kappa": v} for k, v in pairs.items()],
                },
                "usage": usage,
            },
        )
    )
    return RunResult(list(responses), rows, summary, files, usage)
