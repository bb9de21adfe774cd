"""The static site: escaping, safe file names, working links, index content, determinism."""

from __future__ import annotations

import json
import re
import threading
import urllib.error
import urllib.request
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from storage import LocalStore, MemoryStore, keys
from tests.report import stores
from tests.validator.records import make_record
from validator.report import CSP, build_report, miner_page, round_page
from validator.report.builder import _visible
from validator.report.serve import make_server


class Page(HTMLParser):
    """Tags with their attributes, the text, and inline script/handler/style findings."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.inline_scripts = 0
        self._in_script = False

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        self._in_script = tag == "script"

    def handle_endtag(self, tag):
        self._in_script = False

    def handle_data(self, data):
        if self._in_script and data.strip():
            self.inline_scripts += 1
        self.text.append(data)

    def all(self, tag: str) -> list[dict[str, str | None]]:
        return [a for t, a in self.tags if t == tag]


def parse(path: Path) -> Page:
    page = Page()
    page.feed(path.read_text(encoding="utf-8"))
    return page


def table_rows(path: Path, table_id: str) -> list[list[str]]:
    """The non-blank texts of each body row of a table."""
    body = path.read_text(encoding="utf-8").split(f'<table id="{table_id}"', 1)[1].split("</tbody>", 1)[0]
    rows = []
    for chunk in body.split("<tbody>", 1)[1].split("<tr")[1:]:
        p = Page()
        p.feed("<tr" + chunk)
        rows.append([t.strip() for t in p.text if t.strip()])
    return rows


def pages(site: Path) -> list[Path]:
    return sorted(site.rglob("*.html"))


def test_every_file_stays_inside_the_site_under_one_segment_per_id(hostile_site):
    root = hostile_site.resolve()
    for path in hostile_site.rglob("*"):
        assert path.resolve().is_relative_to(root)
    assert not list(hostile_site.rglob(".*"))  # no temporary files left behind
    for miner in stores.HOSTILE_MINERS:
        page = hostile_site / miner_page(miner)
        assert page.is_file(), miner
        assert page.parent.parent == hostile_site / "miner" and page.parent.name == keys.component(miner)
    assert (hostile_site / round_page(stores.HOSTILE_ROUND)).is_file()
    assert (hostile_site / "miner" / "%2E%2E%2F%2E%2E%2Fetc%2Fpasswd" / "index.html").is_file()


def test_every_link_and_image_resolves_to_a_file_of_the_site(hostile_site):
    root = hostile_site.resolve()
    checked = 0
    for path in pages(hostile_site):
        for _tag, attrs in parse(path).tags:
            for name in ("href", "src"):
                url = attrs.get(name)
                if url is None or url.startswith("#"):
                    continue
                parts = urlsplit(url)
                assert not parts.scheme and not parts.netloc, f"{path}: external {name} {url!r}"
                target = (path.parent / unquote(parts.path)).resolve()
                assert target.is_relative_to(root) and target.is_file(), f"{path}: broken {name} {url!r}"
                checked += 1
    assert checked > 100


def test_pages_carry_the_csp_and_no_inline_script_handler_or_style(hostile_site):
    for path in pages(hostile_site):
        page = parse(path)
        metas = [m for m in page.all("meta") if m.get("http-equiv") == "Content-Security-Policy"]
        assert [m["content"] for m in metas] == [CSP], path
        assert page.inline_scripts == 0, path
        assert [s.get("src") for s in page.all("script")] == [s.get("src") for s in page.all("script") if s.get("src")]
        for tag, attrs in page.tags:
            assert not any(a.startswith("on") or a == "style" for a in attrs), (path, tag, attrs)
    assert "script-src 'self'" in CSP and "unsafe-inline" not in CSP and "default-src 'none'" in CSP


def test_hostile_texts_are_text_and_never_markup(hostile_site):
    path = hostile_site / round_page(stores.HOSTILE_ROUND)
    raw = path.read_text(encoding="utf-8")
    page = parse(path)
    text = "".join(page.text)
    assert "<script>window.__pwned" not in raw and "<img src=x" not in raw and "<svg" not in raw
    assert stores.SCRIPT_TEXT in text and stores.HOSTILE_PROMPT in text  # shown verbatim, as text
    assert "{{ 7*7 }}" in text  # data are never rendered as templates
    rows = [a for t, a in page.tags if t == "tr" and "data-miner" in a]
    # shown as text, with invisible characters (and lone surrogates) written as their escapes
    assert [r["data-miner"] for r in rows] == [_visible(m) for m in stores.HOSTILE_MINERS]
    assert "ünïcødé-矿工-\\u202eevil" in [r["data-miner"] for r in rows]
    for other in pages(hostile_site):
        assert "<script>window" not in other.read_text(encoding="utf-8"), other


def test_round_page_has_heatmap_table_answers_and_narrative(hostile_store, hostile_site):
    record = json.loads(LocalStore(hostile_store).get(keys.evaluation("r-0001")))
    path = hostile_site / round_page("r-0001")
    page = parse(path)
    heatmaps = [i for i in page.all("img") if i.get("id") == "heatmap"]
    assert len(heatmaps) == 1 and (path.parent / heatmaps[0]["src"]).read_bytes().startswith(b"\x89PNG")
    rows = [a for t, a in page.tags if t == "tr" and "data-miner" in a]
    assert [r["data-miner"] for r in rows] == [r["miner"] for r in record["responses"]]
    assert [r["class"] for r in rows] == ["in" if r["in_consensus"] else "out" for r in record["responses"]]
    text = "".join(page.text)
    assert record["narrative"]["text"] in text and record["prompt"] in text
    source = json.loads(LocalStore(hostile_store).get(keys.round_input("r-0001")))
    for answer in source["responses"]:
        assert answer["text"] in text
    assert f"{record['consensus']['score']:.3f}" in text


def test_index_lists_every_round_in_order_with_its_numbers(hostile_store, hostile_site):
    store = LocalStore(hostile_store)
    page = parse(hostile_site / "index.html")
    rows = [a for t, a in page.tags if t == "tr" and "data-round" in a]
    assert [r["data-round"] for r in rows] == ["r-0001", "r-0002", "r-0003", stores.HOSTILE_ROUND]
    for row in rows:
        record = json.loads(store.get(keys.evaluation(row["data-round"])))
        assert row["data-reached"] == ("yes" if record["consensus"]["reached"] else "no")
    text = "".join(page.text)
    assert "4 round(s)" in text
    miners = {a["data-miner"] for t, a in page.tags if t == "tr" and "data-miner" in a}
    expected = {
        r["miner"]
        for rid in ("r-0001", "r-0002", "r-0003", stores.HOSTILE_ROUND)
        for r in json.loads(store.get(keys.evaluation(rid)))["responses"]
    }
    assert miners == {_visible(m) for m in expected}


@pytest.fixture(scope="module")
def daemon_site(daemon_dir, tmp_path_factory):
    """The daemon store's site, built once: read by the next test, rebuilt and compared by the one after."""
    site = tmp_path_factory.mktemp("daemon-site") / "site"
    return site, build_report(str(daemon_dir), site)


def test_daemon_store_shows_time_failures_no_quorum_and_the_ledger(daemon_dir, daemon_site):
    site, result = daemon_site
    assert (result.rounds, result.miners) == (3, 4)
    page = parse(site / "index.html")
    cells = table_rows(site / "index.html", "rounds")
    assert [c[1] for c in cells] == ["round-000001", "round-000002", "round-000003"]
    assert [c[2] for c in cells] == [f"2026-01-01T00:0{i}:00.000Z" for i in range(3)]
    assert [c[6] for c in cells] == ["ok", "ok", "no_quorum"]
    assert [c[8] for c in cells] == ["0", "1", "3"]  # failures
    assert "EMA" in "".join(page.text) and "Weight" in "".join(page.text)
    ledger = json.loads(LocalStore(daemon_dir).get(keys.ledger()))
    miner = parse(site / miner_page("bob"))
    assert f"{ledger['miners']['bob']['ema']:.3f}" in "".join(miner.text)
    no_quorum = "".join(parse(site / round_page("round-000003")).text)
    assert "No heatmap was stored" in no_quorum and "timeout" in no_quorum


def test_rebuilding_gives_identical_files(daemon_dir, daemon_site, tmp_path):
    (site, _), again = daemon_site, tmp_path / "again"  # the daemon store: plots, ledger, trends, failures
    build_report(str(daemon_dir), again)
    first = {p.relative_to(site): p.read_bytes() for p in site.rglob("*") if p.is_file()}
    second = {p.relative_to(again): p.read_bytes() for p in again.rglob("*") if p.is_file()}
    assert first.keys() == second.keys()
    assert [k for k in first if first[k] != second[k]] == []


def test_unreadable_and_misplaced_records_are_listed_not_fatal(daemon_dir, tmp_path):
    src = LocalStore(daemon_dir)  # two rounds of four miners: the site's size is not the point here
    store = MemoryStore()
    for key in src.list("rounds/round-000001/") + src.list("rounds/round-000002/"):
        store.put(key, src.get(key))
    store.put(keys.evaluation("broken"), b"{not json")
    store.put(keys.evaluation("elsewhere"), src.get(keys.evaluation("round-000001")))  # claims round-000001
    store.put(
        keys.round_input("in-flight"),
        src.get(keys.round_input("round-000002")).replace(b'"round-000002"', b'"in-flight"'),
    )
    result = build_report(store, tmp_path / "site", source="memory://test")
    assert result.rounds == 2
    assert sorted(s.key for s in result.skipped) == [keys.evaluation("broken"), keys.evaluation("elsewhere")]
    assert result.pending == ("in-flight",)
    text = "".join(parse(tmp_path / "site" / "index.html").text)
    assert "rounds/broken/evaluation.json" in text and "in-flight" in text and "memory://test" in text


@pytest.mark.parametrize("bad", [None, "x", 3, [], {"round_id": 5, "responses": []}, {"round_id": "a"}])
def test_a_non_record_is_refused(bad):
    from validator.review import parse_record

    with pytest.raises(ValueError):
        parse_record(bad)


@pytest.mark.parametrize(
    ("path", "value", "named"),
    [
        (("responses", 0, "miner"), 7, "responses[0].miner"),
        (("responses", 0, "score", "composite"), "90", "responses[0].score.composite"),
        (("responses", 0, "score", "alignment"), float("nan"), "responses[0].score.alignment"),
        (("responses", 0, "emissions", "amount"), True, "responses[0].emissions.amount"),
        (("consensus", "reached"), 1, "consensus.reached"),
        (("daemon",), {"sequence": True, "started_at": None}, "daemon.sequence"),
        (("narrative",), None, "narrative"),
    ],
)
def test_a_wrongly_typed_field_is_refused_naming_it(path, value, named):
    from validator.review import parse_record

    record = make_record("x", [("a", True, 10)]).to_json()
    target = record
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = value
    with pytest.raises(ValueError, match=re.escape(f"field {named!r}")):
        parse_record(record, source="rounds/x/evaluation.json")


def test_rounds_are_ordered_by_sequence_then_naturally_by_id(tmp_path):
    from validator.review import load_store

    store = MemoryStore()
    for rid, seq in (("r-10", None), ("r-2", None), ("d-b", 2), ("d-a", 1)):
        record = make_record(rid, [("a", True, 10)], sequence=seq)
        store.put(keys.evaluation(rid), json.dumps(record.to_json()).encode())
    review = load_store(store)
    assert [r.round_id for r in review.rounds] == ["d-a", "d-b", "r-2", "r-10"]
    assert [r.order for r in review.rounds] == [1, 2, 3, 4]


# the loopback server, on the hostile site built for this module (one build per test worker)
def test_server_serves_the_site_on_loopback_with_the_csp(hostile_site):
    server = make_server(hostile_site, 0)
    host, port = server.server_address[:2]
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
    thread.start()
    try:
        assert host == "127.0.0.1"
        base = f"http://127.0.0.1:{port}/"
        with urllib.request.urlopen(base + "index.html", timeout=10) as resp:
            assert resp.headers["Content-Security-Policy"] == CSP
            assert resp.headers["X-Content-Type-Options"] == "nosniff"
            assert b"<h1>Rounds</h1>" in resp.read()
        href = "miner/%252E%252E%252F%252E%252E%252Fetc%252Fpasswd/index.html"  # as the pages link it
        with urllib.request.urlopen(base + href, timeout=10) as resp:
            assert b"../../etc/passwd" in resp.read()
        for path in ("round/", "../../../etc/passwd", "%2E%2E/%2E%2E/etc/passwd"):
            with pytest.raises(urllib.error.HTTPError) as err:
                urllib.request.urlopen(base + path, timeout=10)
            assert err.value.code == 404
            err.value.close()
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def yes_no_round():
    """A yes/no round whose members split: four say yes, one says no, and the factual check's verdicts."""
    import dataclasses

    from validator.records import evaluation_record as rec

    record = make_record(
        "yn-1", [("a", True, 10), ("b", True, 10), ("c", True, 10), ("d", True, 10), ("e", True, 10), ("f", False, 0)]
    )
    labels = ["affirmative", "affirmative", "affirmative", "affirmative", "negative", None]
    responses = tuple(dataclasses.replace(r, polarity=p) for r, p in zip(record.responses, labels))
    checks = (
        rec.FactualCheckRecord(index=0, anchors=(1, 2), agreement=2 / 3, score=7, skipped=None),
        rec.FactualCheckRecord(index=1, anchors=(0, 2), agreement=2 / 3, score=7, skipped=None),
        rec.FactualCheckRecord(index=2, anchors=(0, 1), agreement=2 / 3, score=7, skipped=None),
        rec.FactualCheckRecord(index=3, anchors=(), agreement=0.0, score=0, skipped=None),
        rec.FactualCheckRecord(
            index=4, anchors=(), agreement=None, score=None, skipped="the round's LM budget of 30 s is spent"
        ),
    )
    consensus = dataclasses.replace(record.consensus, polarity_agreed=False, majority_polarity="affirmative")
    return dataclasses.replace(record, responses=responses, factual_checks=checks, consensus=consensus)


def test_round_page_shows_each_answers_yes_no_label_and_factual_verdict(tmp_path):
    store = MemoryStore()
    record = yes_no_round()
    store.put(keys.evaluation(record.round_id), json.dumps(record.to_json()).encode())
    build_report(store, tmp_path / "site")
    page = tmp_path / "site" / round_page(record.round_id)
    rows = table_rows(page, "responses")
    yes_no = [row[row.index("in") + 2] if "in" in row else row[row.index("out") + 2] for row in rows]
    assert yes_no == ["yes", "yes", "yes", "yes", "no", "—"]
    text = page.read_text(encoding="utf-8")
    assert "2 of 3 other checked members agree" in text and "no other checked member agrees" in text
    assert "not checked: the round&#39;s LM budget of 30 s is spent" in text
    assert re.search(r'id="yes-no">majority yes; they split \(no 1, yes 4\)', text)
    assert 'class="yes-no yes-no-no">no</span>' in text  # the answers section labels each answer too


def whatif_doc() -> dict:
    """A small ``whatif.json`` (``validator whatif``): one changed setting, no miners."""
    return {
        "schema": "consensus-validator/whatif/1",
        "whatif_id": "threshold-0.95",
        "source": "s",
        "summary": {
            "rounds": 1,
            "failed": 0,
            "skipped": 0,
            "reached_old": 1,
            "reached_new": 0,
            "membership_changed": 1,
            "embeddings_reused": 1,
        },
        "config_changes": [{"setting": "consensus.consensus_threshold", "old": 0.7, "new": 0.95}],
        "miners": {},
        "rounds": [],
    }


def test_index_links_the_whatif_page_when_there_is_one(tmp_path):
    store = MemoryStore()
    record = make_record("r-1", [("a", True, 10)])
    store.put(keys.evaluation("r-1"), json.dumps(record.to_json()).encode())
    site = tmp_path / "site"
    build_report(store, site)
    assert 'href="whatif.html"' not in (site / "index.html").read_text()
    build_report(store, site, whatif=whatif_doc())
    index = parse(site / "index.html")
    assert {"href": "whatif.html"} in index.all("a") and "What-if threshold-0.95" in "".join(index.text)
    assert (site / "whatif.html").is_file()
    build_report(store, site)  # rebuilt without it: the page from before is still there, and still linked
    assert 'href="whatif.html"' in (site / "index.html").read_text()


def test_invisible_characters_in_ids_and_answers_are_shown_escaped(tmp_path):
    """A miner id with a zero-width space cannot pose as another miner on any page (the terminal escapes it too)."""
    store = MemoryStore()
    record = make_record("r-1", [("uid\u200b-3", True, 10), ("uid-3", True, 10), ("rtl\u202eevil", False, 0)])
    store.put(keys.evaluation("r-1"), json.dumps(record.to_json()).encode())
    out = tmp_path / "site"
    build_report(store, out)
    pages = "".join(p.read_text(encoding="utf-8") for p in out.rglob("*.html"))
    assert "uid\\u200b-3" in pages and "rtl\\u202eevil" in pages
    assert "\u200b" not in pages and "\u202e" not in pages
