"""benchmarks.task_record: the recorded task ladder's files, resume, extraction and report arithmetic.

Fast tests need no model (reasoning-gym generates a task in milliseconds); the slow one records two tasks
with the real Qwen2.5-Coder-0.5B server on loopback.
"""

from __future__ import annotations

import json
import math
import types

import pytest

import benchmarks.task_record as tr


def toy_record(rung: str, family: str, seed: int, text: str, draw: str = "accuracy", **extra: object) -> dict:
    entry, _ = tr.task_entry(family, seed)
    base = {
        "rung": rung,
        "model": "toy-model",
        "draw": draw,
        "family": family,
        "seed": seed,
        "question": entry["question"],
        "expected": str(entry["answer"]),
        "text": text,
        "latency_s": 2.0,
        "completion_tokens": 10,
    }
    base.update(extra)
    return base


def test_draws_are_fixed_disjoint_and_cover_the_families():
    acc, net = tr.draw_tasks("accuracy"), tr.draw_tasks("network")
    assert len(acc) == 60 and len(net) == 150
    assert tr.draw_tasks("accuracy") == acc  # no randomness outside the seeds
    assert not {(t.family, t.seed) for t in acc} & {(t.family, t.seed) for t in net}
    for tasks, per_family in ((acc, 4), (net, 10)):
        assert {f: sum(t.family == f for t in tasks) for f in tr.FAMILIES} == dict.fromkeys(tr.FAMILIES, per_family)
    with pytest.raises(ValueError, match="unknown draw"):
        tr.draw_tasks("holdout")


def test_every_task_of_both_draws_verifies_its_own_answer():
    for draw in ("accuracy", "network"):
        for task in tr.draw_tasks(draw)[:: len(tr.FAMILIES) - 1]:
            entry, dataset = tr.task_entry(task.family, task.seed)
            assert dataset.score_answer(str(entry["answer"]), entry) == 1.0


def test_the_request_is_the_question_then_the_answer_line_instruction():
    (message,) = tr.messages("What is 2 + 2?")
    assert message == {
        "role": "user",
        "content": 'What is 2 + 2?\n\nEnd your reply with a last line of the form "Answer: <answer>".',
    }


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Answer: 42", "42"),
        ("Let me think.\n4 * 10 + 2 = 42\nAnswer: **42**.", "42"),
        ("answer:  Wednesday", "Wednesday"),
        ("Answer: <3 × 3 × 37>", "3 × 3 × 37"),
        ("First answer: 1\nFinal Answer: 2", "2"),
        ("Answer: 1.5", "1.5"),
        ("Answer: 3.14.", "3.14"),
        ('Answer: "sutcac"', "sutcac"),
        ("The result is 42.", None),
        ("Answer:", None),
        ("", None),
    ],
)
def test_extract_answer(text, expected):
    assert tr.extract_answer(text) == expected


def test_sampling_as_sent():
    greedy, hot = tr.RUNGS_BY_NAME["qwen05"], tr.RUNGS_BY_NAME["qwen05-hot"]
    assert greedy.sampling(2**40 + 3) == {"temperature": 0.0, "max_tokens": 256, "seed": 3}
    assert hot.sampling(7) == {"temperature": 1.5, "max_tokens": 48, "seed": 7, "top_k": 0, "top_p": 1.0, "min_p": 0.0}
    sent = {}

    class FakeCompletions:
        def create(self, **kwargs):
            sent.update(kwargs)
            message = types.SimpleNamespace(content="Answer: 6")
            return types.SimpleNamespace(
                choices=[types.SimpleNamespace(message=message, finish_reason="stop")],
                usage=types.SimpleNamespace(prompt_tokens=40, completion_tokens=4),
            )

    client = types.SimpleNamespace(chat=types.SimpleNamespace(completions=FakeCompletions()))
    got = tr.complete(client, "m", tr.messages("q"), hot.sampling(7))
    assert got == tr.Completion("Answer: 6", tr.Usage(40, 4), finish_reason="stop")
    # the OpenAI parameters as such, llama.cpp's own in the body
    assert sent == {
        "model": "m",
        "messages": tr.messages("q"),
        "temperature": 1.5,
        "max_tokens": 48,
        "seed": 7,
        "top_p": 1.0,
        "extra_body": {"top_k": 0, "min_p": 0.0},
    }
    sent.clear()
    tr.complete(client, "m", tr.messages("q"), greedy.sampling(7))
    assert sent["extra_body"] is None and "top_p" not in sent


def test_jsonl_round_trip(tmp_path):
    path = tr.rung_path(tmp_path, "qwen05")
    records = [
        toy_record("qwen05", "gcd", 5, "Answer: 1", extra_field={"nested": [1, 2]}),
        toy_record("qwen05", "spell_backward", 6, "Answer: «ünïcode»\nsecond line"),
    ]
    for r in records:
        tr.append_line(path, r)
    assert tr.load_lines(path) == records
    assert path.read_text(encoding="utf-8").count("\n") == 2


def test_a_half_written_last_line_is_dropped_and_cut_off(tmp_path, capsys):
    path = tr.rung_path(tmp_path, "r")
    whole = toy_record("r", "gcd", 5, "Answer: 1")
    tr.append_line(path, whole)
    with open(path, "a") as fh:
        fh.write('{"rung": "r", "dra')
    assert tr.load_lines(path) == [whole]
    assert "half-written last line" in capsys.readouterr().err
    assert path.read_text().endswith('"dra')  # reading alone changes nothing
    assert tr.load_lines(path, repair=True) == [whole]
    assert path.read_text() == json.dumps(whole, ensure_ascii=False, sort_keys=True) + "\n"


def test_a_bad_line_inside_the_file_names_it(tmp_path):
    path = tr.rung_path(tmp_path, "r")
    tr.append_line(path, toy_record("r", "gcd", 5, "x"))
    with open(path, "a") as fh:
        fh.write("not json\n")
    tr.append_line(path, toy_record("r", "gcd", 6, "x"))
    with pytest.raises(ValueError, match=r"r\.jsonl:2: not a JSON line"):
        tr.load_lines(path)
    path.write_text('{"rung": "r"}\n')
    with pytest.raises(ValueError, match=r"r\.jsonl:1: a record needs draw, family and seed"):
        tr.load_lines(path)


def test_resume_skips_what_is_recorded(tmp_path):
    qwen15 = tr.RUNGS_BY_NAME["qwen15"]
    hot = tr.RUNGS_BY_NAME["qwen15-hot"]
    gemma = tr.RUNGS_BY_NAME["gemma270"]
    rungs = [qwen15, hot, gemma]
    first = list(tr.plan(rungs, ["accuracy", "network"], tmp_path, chunk=50, limit=None))
    # the accuracy draw for every model, then the network draw in chunks of 50, one model after the other
    assert [(m.name, len(todo)) for m, todo in first] == [
        (qwen15.model.name, 120),
        (gemma.model.name, 60),
        *[(qwen15.model.name, 100), (gemma.model.name, 50)] * 3,
    ]
    done = tr.draw_tasks("accuracy")[:7]
    for task in done:
        tr.append_line(tr.rung_path(tmp_path, "qwen15"), toy_record("qwen15", task.family, task.seed, "Answer: 1"))
    again = list(tr.plan(rungs, ["accuracy"], tmp_path, chunk=50))
    pending = {(r.name, t.seed) for _, todo in again for r, t in todo}
    assert len(pending) == 3 * 60 - 7
    assert not {("qwen15", t.seed) for t in done} & pending
    assert {("qwen15-hot", t.seed) for t in done} <= pending  # another rung's file is its own
    limited = list(tr.plan(rungs, ["network"], tmp_path, chunk=50, limit=2))
    assert [len(todo) for _, todo in limited] == [4, 2]


def test_a_task_recorded_at_another_config_is_recorded_again(tmp_path):
    # the default set's configs change (2026-11-29): an answer to (draw, family, seed) at the old config is not one
    # to the new task
    qwen15 = tr.RUNGS_BY_NAME["qwen15"]
    ts = tr.default_set()
    task = tr.draw_tasks("accuracy", families=ts.families)[0]
    old = toy_record("qwen15", task.family, task.seed, "Answer: 1") | {"config": {"max_digits": 1}}
    tr.append_line(tr.rung_path(tmp_path, "qwen15"), old)
    pending = [
        t for _, todo in tr.plan([qwen15], ["accuracy"], tmp_path, chunk=50, limit=1, tasks_set=ts) for _, t in todo
    ]
    assert pending == [task]
    now = old | {"config": dict(ts.configs[task.family])}
    tr.append_line(tr.rung_path(tmp_path, "qwen15"), now)
    assert not list(tr.plan([qwen15], ["accuracy"], tmp_path, chunk=50, limit=1, tasks_set=ts))
    # a set that dropped a family keeps the draw's earlier layout: the others' tasks stay where they were recorded
    layout = (*ts.families, "gcd")
    planned = [t for _, todo in tr.plan([qwen15], ["accuracy"], tmp_path, 50, 12, ts, layout) for _, t in todo]
    assert [t for t in tr.draw_tasks("accuracy", families=layout)[:12] if t.family != "gcd"] == [task, *planned]


def test_wilson_interval():
    a = tr.wilson(8, 10)
    assert a.rate == 0.8
    assert a.low == pytest.approx(0.4902, abs=1e-4) and a.high == pytest.approx(0.9433, abs=1e-4)
    assert tr.wilson(0, 5).low == 0.0 and tr.wilson(5, 5).high == 1.0
    assert tr.wilson(0, 0).n == 0 and math.isnan(tr.wilson(0, 0).rate)


def test_report_accuracy_arithmetic_on_a_toy_file(tmp_path):
    # the verifier really runs: right answers score 1, a wrong one and an unreadable one 0
    acc = tr.draw_tasks("accuracy")
    gcd = [t for t in acc if t.family == "gcd"]
    lcm = [t for t in acc if t.family == "lcm"]
    rows = []
    for task in gcd[:3]:
        entry, _ = tr.task_entry(task.family, task.seed)
        rows.append(toy_record("qwen05", "gcd", task.seed, f"Working...\nAnswer: {entry['answer']}"))
    rows.append(toy_record("qwen05", "gcd", gcd[3].seed, "Answer: 999999937"))
    rows.append(toy_record("qwen05", "lcm", lcm[0].seed, "I cannot tell."))
    net = tr.draw_tasks("network")[0]
    rows.append(toy_record("qwen05", net.family, net.seed, "Answer: 0", draw="network"))
    rows.append(toy_record("gemma270", "gcd", gcd[0].seed, "Answer: 999999937", model="other", latency_s=1.0))
    for r in rows:
        tr.append_line(tr.rung_path(tmp_path, r["rung"]), r)
    reports = tr.summarize(tr.load_dir(tmp_path))
    assert [r.rung for r in reports] == ["qwen05", "gemma270"]  # the ladder's order
    q = reports[0]
    assert (q.overall.n, q.overall.correct) == (5, 3)
    assert q.overall == tr.wilson(3, 5)
    assert (q.families["gcd"].n, q.families["gcd"].correct) == (4, 3)
    assert (q.families["lcm"].n, q.families["lcm"].correct) == (1, 0)
    assert set(q.families) == {"gcd", "lcm"}
    assert q.network == 1 and q.completion_tokens == 60 and q.seconds == 12.0
    assert (reports[1].overall.n, reports[1].overall.correct, reports[1].network) == (1, 0, 0)
    text = tr.render(reports)
    assert "qwen05" in text and "3/4" in text and "0.600" in text
    assert "toy-model" in text and "5.00 tok/s" in text  # 60 tokens in 12 s
    table = tr.render_markdown(reports).splitlines()
    assert table[2] == "| qwen05 | toy-model | T=0, max 256 | 5 | 0.600 | [0.231, 0.882] | 0.600 | 5.0 | 1 |"


def test_partial_credit_is_not_a_correct_answer():
    task, other = [t for t in tr.draw_tasks("accuracy") if t.family == "gsm_symbolic"][:2]
    entry, dataset = tr.task_entry(task.family, task.seed)
    wrong = str(float(entry["answer"]) + 1)
    assert 0 < dataset.score_answer(wrong, entry) < 1  # reasoning-gym's partial credit for a wrong number
    rows = [toy_record("r", task.family, task.seed, f"Answer: {wrong}")]
    right = tr.task_entry(other.family, other.seed)[0]["answer"]
    rows.append(toy_record("r", other.family, other.seed, f"Answer: {right}"))
    (rep,) = tr.summarize(rows)
    assert rep.overall.correct == 1 and 0.5 < rep.mean_score < 1


def test_a_record_of_another_generator_version_is_an_error():
    task = tr.draw_tasks("accuracy")[2]
    row = toy_record("r", task.family, task.seed, "Answer: 1", question="a question this seed does not make")
    with pytest.raises(ValueError, match="regenerated question differs"):
        tr.score(row)


def test_help_names_the_rungs(capsys):
    with pytest.raises(SystemExit):
        tr.main(["--help"])
    out = capsys.readouterr().out
    assert all(r.name in out for r in tr.RUNGS)


@pytest.mark.slow
def test_records_two_tasks_with_the_real_05b_server_and_resumes(tmp_path):
    from embedding.cache import default_cache_dir

    rung = tr.RUNGS_BY_NAME["qwen05-hot"]  # 48 tokens at most: a short test
    kwargs = dict(chunk=25, threads=1, deadline=None, cache_dir=default_cache_dir(), limit=2)
    assert tr.record([rung], ["accuracy"], tmp_path, **kwargs) == 2
    rows = tr.load_lines(tr.rung_path(tmp_path, rung.name))
    assert [(r["family"], r["seed"]) for r in rows] == [(t.family, t.seed) for t in tr.draw_tasks("accuracy")[:2]]
    for r in rows:
        assert r["model"] == "qwen2.5-coder-0.5b-instruct-q4_k_m" and r["rg_version"] == "0.1.25"
        assert r["sampling"] == {
            "temperature": 1.5,
            "max_tokens": 48,
            "seed": r["seed"] % 2**31,
            "top_k": 0,
            "top_p": 1.0,
            "min_p": 0.0,
        }
        assert r["messages"] == tr.messages(r["question"])
        assert 0 < r["completion_tokens"] <= 48 and r["latency_s"] > 0 and r["text"]
    assert tr.record([rung], ["accuracy"], tmp_path, **kwargs) == 0  # resumed: nothing left to do
    assert len(tr.summarize(rows)[0].families) == 2


def test_part_path_reads_either_accessor(tmp_path, monkeypatch):
    import sys
    import types

    import lm.embedded as local
    from lm.errors import LocalServerError

    qwen_style = types.ModuleType("qwen_style_part1")
    qwen_style.get_part_path = lambda: str(tmp_path / "a")  # type: ignore[attr-defined]
    gemma_style = types.ModuleType("gemma_style_part1")
    gemma_style.chunk_path = lambda: tmp_path / "b"  # type: ignore[attr-defined]
    neither = types.ModuleType("neither_part1")
    for module in (qwen_style, gemma_style, neither):
        monkeypatch.setitem(sys.modules, module.__name__, module)
    assert local.part_path("qwen_style_part1") == tmp_path / "a"
    assert local.part_path("gemma_style_part1") == tmp_path / "b"
    with pytest.raises(LocalServerError, match="neither get_part_path"):
        local.part_path("neither_part1")


def test_gemma_parts_are_installed_with_the_pinned_sizes():
    import lm.embedded as local

    sizes = [local.part_path(package).stat().st_size for package, _ in tr.GEMMA270.parts]
    assert sum(sizes) == tr.GEMMA270.size and len(sizes) == 4


@pytest.mark.slow
def test_gemma_gets_its_chat_template(tmp_path):
    """The GGUF carries no template; with llama.cpp's ChatML fallback, or a built-in name read as Jinja, the
    question never reached the model (3 prompt tokens). One answer of the degraded rung, 48 tokens at most."""
    from embedding.cache import default_cache_dir

    rung = tr.RUNGS_BY_NAME["gemma270-hot"]
    tr.record(
        [rung], ["accuracy"], tmp_path, chunk=25, threads=1, deadline=None, cache_dir=default_cache_dir(), limit=1
    )
    (row,) = tr.load_lines(tr.rung_path(tmp_path, rung.name))
    assert row["prompt_tokens"] > 20 and "<|im_start|>" not in row["text"]


def test_a_task_answered_twice_counts_once():
    task = next(t for t in tr.draw_tasks("accuracy") if t.family == "gcd")
    entry, _ = tr.task_entry(task.family, task.seed)
    rows = [toy_record("r", "gcd", task.seed, f"Answer: {entry['answer']}"), toy_record("r", "gcd", task.seed, "x")]
    (rep,) = tr.summarize(rows)
    assert (rep.overall.n, rep.overall.correct) == (1, 1)


def test_a_verifier_that_raises_scores_zero():
    task = next(t for t in tr.draw_tasks("accuracy") if t.family == "prime_factorization")
    entry, dataset = tr.task_entry(task.family, task.seed)
    with pytest.raises(ValueError):  # reasoning-gym 0.1.25's own verifier, on a miner's text
        dataset.score_answer("717 = 7 × 103", entry)
    assert tr.score(toy_record("r", task.family, task.seed, "Answer: 717 = 7 × 103")) == 0.0


def test_the_default_set_asks_the_products_tasks_and_request():
    from tasks.source import DEFAULT_CONFIGS, FORMAT, TaskSpec, generate

    ts = tr.default_set()
    tasks = tr.draw_tasks("accuracy", families=ts.families)
    assert {t.family for t in tasks} == set(DEFAULT_CONFIGS) and len(tasks) == 60
    for task in tasks[:10]:
        entry, dataset = tr.task_entry(task.family, task.seed, ts.configs[task.family])
        product = generate(TaskSpec(task.family, task.seed, DEFAULT_CONFIGS[task.family]))
        assert entry["question"] == product.question and dataset.score_answer(product.answer, entry) == 1.0
    (message,) = tr.messages("What is 2 + 2?", ts.instruction)
    assert message["content"].endswith(FORMAT)
    # a record keeps its config, and its score regenerates the task with it
    task = tasks[0]
    entry, _ = tr.task_entry(task.family, task.seed, ts.configs[task.family])
    row = {"family": task.family, "seed": task.seed, "config": dict(ts.configs[task.family])}
    row |= {"rung": "r", "question": entry["question"], "text": f"Answer: {entry['answer']}"}
    assert tr.score(row) == 1.0


def test_shared_tasks_are_those_every_rung_answered_in_draw_order():
    net = tr.draw_tasks("network")
    rows = [toy_record(rung, t.family, t.seed, "x", draw="network") for rung in ("a", "b") for t in net[:3]]
    rows.append(toy_record("a", net[3].family, net[3].seed, "x", draw="network"))  # b has not answered it yet
    acc = tr.draw_tasks("accuracy")[0]
    rows.append(toy_record("a", acc.family, acc.seed, "x"))
    shared = tr.shared_tasks(list(reversed(rows)))
    assert list(shared) == [(t.family, t.seed) for t in net[:3]]
    assert all(set(answers) == {"a", "b"} for answers in shared.values())
