"""Task rounds (docs/daemon.md "Tasks"): the task source's draw, pay for correctness, earned trust, replay."""

from __future__ import annotations

import json
import logging

import pytest

from storage import keys
from storage.memory import MemoryStore
from tasks import TaskSpec, generate
from validator.daemon.daemon import Daemon, DaemonError
from validator.daemon.prometheus import Metrics
from validator.daemon.task_source import TaskSource, TaskSourceError, choose, repeat_after_ticks
from validator.miners.fake import FakeMiners
from validator.replaying.replay_run import replay_store
from validator.review.unpaid import weights_table
from validator.round.prompt_source import PromptItem
from validator.settings import load_settings
from validator.settings.sections import DaemonSettings, TaskSettings

SECRET = b"a validator's own secret, 32+ chars"


def _prompts(source: TaskSource, sequences, prompts=(), canaries=(), secret=SECRET, daemon=None):
    return [
        choose(s, prompts=prompts, canaries=canaries, secret=secret, daemon=daemon or DaemonSettings(), tasks=source)
        for s in sequences
    ]


def test_the_default_daemon_asks_no_prompt_twice_in_10000_ticks():
    # the default: no prompts file, tasks on, one committee a tick (README's first command)
    source = TaskSource(TaskSettings(), SECRET, every_round=True)
    asked = _prompts(source, range(1, 10_001))
    texts = [c.item.prompt for c in asked]
    assert len(set(texts)) == len(texts) == 10_000
    assert all(c.task is not None and c.item.prompt == c.task.prompt for c in asked)
    families = {c.task.spec.family for c in asked if c.task is not None}
    assert families == set(TaskSettings().family_names())  # every default family drawn
    assert not any(c.canary for c in asked)  # canaries come from a canaries file only


def test_asked_questions_survive_a_restart(tmp_path):
    # the generator's own config (numbers to 1000): the default one has 99 questions
    wide = TaskSettings(families="prime_factorization", config='{"prime_factorization": {}}')
    first = TaskSource(wide, SECRET, every_round=True, state_dir=tmp_path)
    got = [first.task_for(s).question for s in range(1, 301)]
    again = TaskSource(wide, SECRET, every_round=True, state_dir=tmp_path)
    later = [again.task_for(s).question for s in range(1, 301)]  # the same sequences drawn again after a restart
    assert len(set(got) | set(later)) == 600  # none repeats: the file remembers what was asked


def test_a_family_whose_small_space_runs_out_widens_to_the_generators_own_config():
    # gcd of numbers up to 2 has a handful of questions: the daemon must not stop, nor repeat one
    small = {"min_value": 1, "max_value": 2}
    source = TaskSource(TaskSettings(families="gcd", config=json.dumps({"gcd": small})), SECRET, every_round=True)
    tasks = [source.task_for(s) for s in range(1, 200)]
    assert len({t.question for t in tasks}) == 199  # none asked twice
    configs = [t.spec.config for t in tasks]
    assert configs[0] == small and {} in configs  # the small space first, then the generator's own
    assert all(t.spec.config in (small, {}) for t in tasks)


def test_a_source_whose_every_draw_was_asked_stops_with_a_clear_error(monkeypatch):
    source = TaskSource(TaskSettings(families="gcd"), SECRET, every_round=True)
    first = source.task_for(1)
    monkeypatch.setattr(source, "draw", lambda sequence, attempt: first)  # a space of one question
    with pytest.raises(TaskSourceError, match="draws gave only questions asked before"):
        source.task_for(2)


def test_a_miner_cannot_predict_a_ticks_tasks():
    share = TaskSettings(share=0.5)
    mine = _prompts(TaskSource(share, SECRET, every_round=False), range(1, 201), prompts=(PromptItem("p"),))
    theirs = _prompts(
        TaskSource(share, b"somebody else's secret, 32 chars", every_round=False),
        range(1, 201),
        prompts=(PromptItem("p"),),
        secret=b"somebody else's secret, 32 chars",
    )
    which = [c.task is not None for c in mine]
    assert 70 < sum(which) < 130  # about half the rounds ask a task
    assert which != [c.task is not None for c in theirs]  # which rounds: the secret's
    # what they ask: the secret's (the generators' seeds; the default set's small settings share some questions)
    tasks_mine = [c.task.spec.seed for c in mine if c.task]
    tasks_theirs = [c.task.spec.seed for c in theirs if c.task]
    assert not set(tasks_mine) & set(tasks_theirs)
    # the same secret draws the same tasks (a restart, a replay's committees)
    again = _prompts(TaskSource(share, SECRET, every_round=False), range(1, 201), prompts=(PromptItem("p"),))
    assert [c.item for c in again] == [c.item for c in mine]


def test_unknown_family_or_bad_config_is_refused_at_start():
    with pytest.raises(TaskSourceError, match="unknown task family 'chainsum'"):
        TaskSource(TaskSettings(families="chain_sum,chainsum"), SECRET, every_round=True)
    with pytest.raises(TaskSourceError, match="rejects the config"):
        TaskSource(TaskSettings(families="chain_sum", config='{"chain_sum": {"terms": 3}}'), SECRET, every_round=True)


def test_the_default_configs_apply_unless_config_names_the_family():
    from tasks.source import DEFAULT_CONFIGS

    assert TaskSettings().configs() == {f: dict(c) for f, c in DEFAULT_CONFIGS.items()}
    mixed = TaskSettings(families="gcd,chain_sum,calendar_arithmetic", config='{"gcd": {}}')
    # gcd: exactly what config says (its generator's defaults); chain_sum: the default set's; calendar: its generator's
    assert mixed.configs() == {"gcd": {}, "chain_sum": dict(DEFAULT_CONFIGS["chain_sum"])}


def test_repeat_after_ticks():
    assert repeat_after_ticks(100, 4, 0.5, 0.0) == 50
    assert repeat_after_ticks(6, 1, 0.0, 0.0) == 6
    assert repeat_after_ticks(6, 1, 1.0, 0.0) == float("inf")


# ---- the daemon on task rounds ---------------------------------------------------------------------------------
def settings(**extra):
    env = {
        "VALIDATOR_DAEMON__INTERVAL_S": "0",
        "VALIDATOR_DAEMON__COMMITTEE_SIZE": "0",
        "VALIDATOR_OUTPUT__HEATMAP": "false",
        "VALIDATOR_DAEMON__CANARY_RATE": "0",
        **extra,
    }
    return load_settings(None, env=env, dotenv_path=None)


def network(source: TaskSource):
    """Nine miners: two solve, five agree on one wrong answer, one answers without an answer line, one fails."""

    def task_of(prompt):
        return next((t for t in source._given.values() if t.prompt == prompt), None)

    def solver(style):
        def answer(prompt):
            task = task_of(prompt)
            return "Lists in Python are mutable sequences." if task is None else style.format(a=task.answer)

        return answer

    answers = {
        "solver-1": solver("Let me compute it step by step.\n\nAnswer: {a}"),
        "solver-2": solver("The answer is **{a}**."),
        **{f"wrong-{i}": "Working it out carefully, the result follows.\n\nAnswer: 999999" for i in range(5)},
        "rambler": "This is an interesting question that many people have thought about over the years, truly.",
        "down": "unused",
    }
    return FakeMiners(answers, failures={"down": "timeout"})


def task_daemon(store, embedder, s=None, metrics=None, prompts=()):
    s = s or settings()
    source = TaskSource(s.tasks, SECRET, every_round=not prompts)
    d = Daemon(
        store=store,
        embedder=embedder,
        settings=s,
        prompts=prompts,
        query=network(source),
        secret=SECRET,
        tasks=source,
        metrics=metrics,
    )
    return d


def test_a_task_round_pays_the_right_answers_not_the_majority(embedder):
    store, metrics = MemoryStore(), Metrics()
    d = task_daemon(store, embedder, metrics=metrics)
    reports = d.run(ticks=3)
    for report in reports:
        record = json.loads(store.get(keys.evaluation(report.round_id)))
        task = record["task"]
        paid = {r["miner"]: r["emissions"]["amount"] for r in record["responses"]}
        reasons = {r["miner"]: r["reason"] for r in record["responses"]}
        assert paid["solver-1"] > 0 and paid["solver-2"] > 0
        assert sum(paid.values()) == paid["solver-1"] + paid["solver-2"] == record["emissions"]["pool"]
        assert all(paid[f"wrong-{i}"] == 0 and reasons[f"wrong-{i}"] == "wrong" for i in range(5))
        assert reasons["rambler"] == "unreadable" and reasons["down"] == "error"
        verdicts = {a["miner"]: a for a in task["answers"]}
        assert verdicts["solver-2"]["how"] == "answer is" and verdicts["solver-2"]["right"]
        assert verdicts["wrong-0"]["answer"] == "999999" and verdicts["wrong-0"]["reason"] == "wrong"
        assert verdicts["rambler"]["reason"].startswith("unreadable: no answer found")
        assert task["right"] == 2 and task["expected"] and task["version"]
        assert record["consensus"]["reached"] and "verified task: 2 of 8" in record["consensus"]["note"]
        assert f"task {task['family']}: 2 of 8 right" in report.line() and "consensus" not in report.line()
        stored = json.loads(store.get(keys.round_input(report.round_id)))
        assert stored["daemon"]["task"]["entry"]["answer"] == task["expected"]
        assert stored["prompt"].startswith(stored["daemon"]["task"]["entry"]["question"])
    ledger = d.ledger
    assert ledger.miners["solver-1"].tasks == 3 and ledger.miners["solver-1"].tasks_right == 3
    assert ledger.miners["wrong-0"].tasks_right == 0 and ledger.weights()["wrong-0"] == 0
    table = "\n".join(weights_table(ledger))
    assert "verified" in table and "0.80 [0.40, 0.99] (3/3)" in table and "0.20 [0.01, 0.60] (0/3)" in table
    metrics.observe_ledger(ledger)  # as the command does after each round
    text = metrics.render().decode()
    assert 'validator_miner_verified_accuracy{bound="mean",miner="solver-1"} 0.8' in text
    assert "validator_task_rounds_total 3.0" in text


def test_replay_of_a_task_round_verifies_again_to_the_same_numbers(embedder):
    store = MemoryStore()
    task_daemon(store, embedder).run(ticks=3)
    result = replay_store(store, settings(), embedder, replay_id="again")
    assert len(result.diffs) == 3 and not result.failures
    for n in range(1, 4):
        rid = f"round-{n:06d}"
        new = json.loads(store.get(keys.replay_evaluation(rid, "again")))
        old = json.loads(store.get(keys.evaluation(rid)))
        new.pop("replay"), old.pop("daemon")
        assert new == old and new["task"]["right"] == 2


def test_tasks_share_rounds_with_the_operators_prompts(embedder, caplog):
    store = MemoryStore()
    prompts = tuple(PromptItem(f"Explain list mutability in Python (variant {i}).") for i in range(5))
    d = task_daemon(store, embedder, settings(VALIDATOR_TASKS__SHARE="0.5"), prompts=prompts)
    notice = d.repeat_notice()
    assert notice is not None and "after about 10 ticks" in notice  # 5 prompts at half of one committee a tick
    d.run(ticks=12)
    inputs = [json.loads(store.get(keys.round_input(f"round-{n:06d}"))) for n in range(1, 13)]
    kinds = ["task" in doc["daemon"] for doc in inputs]
    assert 0 < sum(kinds) < 12


def test_a_daemon_with_no_prompt_source_needs_tasks(embedder):
    with pytest.raises(DaemonError, match="no prompt source"):
        Daemon(
            store=MemoryStore(), embedder=embedder, settings=settings(), prompts=(), query=FakeMiners({}), secret=SECRET
        )


def test_canaries_come_from_the_canaries_file_only(embedder):
    # tasks as canaries ranked a simulated ladder worse (docs/validity.md "Verifiable tasks"): a task round is
    # known-answer already; canary rounds need a canaries file, and without one none is asked
    store = MemoryStore()
    task_daemon(store, embedder, settings(VALIDATOR_DAEMON__CANARY_RATE="1")).run(ticks=2)
    record = json.loads(store.get(keys.evaluation("round-000002")))
    assert "canary" not in record and record["task"]["right"] == 2
    source = TaskSource(TaskSettings(), SECRET, every_round=True)
    canary = PromptItem("Is water wet? Answer yes or no.", "Yes.")
    got = _prompts(source, range(1, 201), canaries=(canary,))
    assert 10 < sum(c.canary for c in got) < 35 and all(c.item == canary for c in got if c.canary)
    assert all(c.task is None for c in got if c.canary)


def test_stored_task_of_another_shape_names_the_field():
    from consensus.errors import RoundError
    from validator.records.stored_round import parse_stored

    task = generate(TaskSpec("gcd", 3))
    doc = {
        "round_id": "r1",
        "prompt": task.prompt,
        "responses": [{"miner": "a", "text": "x", "latency_s": 1}, {"miner": "b", "text": "y", "latency_s": 1}],
        "daemon": {"sequence": 1, "task": {**task.to_json(), "seed": "three"}},
    }
    with pytest.raises(RoundError, match="daemon.task.*integer 'seed'"):
        parse_stored(doc, "r1/input.json")
    logging.getLogger(__name__).debug("ok")


def test_chain_mode_without_prompts_and_with_tasks_off_stops_with_one_line(tmp_path, monkeypatch, capsys):
    from validator.cli.main import main

    monkeypatch.setenv("VALIDATOR_TASKS__ENABLED", "false")
    argv = ["daemon", "--rounds", "1", "--store", str(tmp_path / "r"), "--no-lm", "--metrics-port", "-1"]
    code = main([*argv, "--netuid", "1", "--network", "local"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1, err
    assert "chain mode needs a prompt source: tasks are off" in err[0]
    assert not (tmp_path / "r").exists()  # nothing started, nothing written


@pytest.mark.slow
def test_task_rounds_with_the_real_embedder_pay_the_same(real_embedder, embedder):
    # the verifier decides, so the real MiniLM (copies, one voice per entity) and the fake one pay alike here
    paid = []
    for e in (real_embedder, embedder):
        store = MemoryStore()
        task_daemon(store, e).run(ticks=2)
        records = [json.loads(store.get(keys.evaluation(f"round-{n:06d}"))) for n in (1, 2)]
        paid.append([[r["emissions"]["amount"] for r in rec["responses"]] for rec in records])
        assert all(rec["task"]["right"] == 2 for rec in records)
    assert paid[0] == paid[1]
