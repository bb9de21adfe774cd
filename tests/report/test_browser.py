"""The built site in headless Chromium (Debian's chromium + chromium-driver, driven by Selenium).

The store is the examples plus a round whose miner ids, prompt and answers carry script, handler
and markup injections; each is checked to render as text and never run.
"""

from __future__ import annotations

import json
import os
import shutil
import threading

import pytest

from storage import LocalStore, keys
from tests.report import stores
from validator.report import build_report, miner_page, round_page
from validator.report.builder import _visible
from validator.report.serve import make_server

pytestmark = pytest.mark.slow

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"


@pytest.fixture(scope="module")
def site(tmp_path_factory, real_embedder):
    store = stores.examples_store(tmp_path_factory, real_embedder)
    out = tmp_path_factory.mktemp("browser-site")
    build_report(str(store), out)
    return store, out


@pytest.fixture(scope="module")
def browser():
    if not (os.path.exists(CHROMIUM) and os.path.exists(CHROMEDRIVER)):
        message = "chromium and chromium-driver are not installed (apt-get install -y chromium chromium-driver)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-extensions",
        "--no-first-run",
        "--window-size=1280,900",
    ):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture(scope="module")
def server(site):
    _, out = site
    srv = make_server(out, 0)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{srv.server_address[1]}/"
    srv.shutdown()
    srv.server_close()
    thread.join(5)


def file_url(out, rel: str) -> str:
    from validator.report.builder import _href

    return (out / "x").resolve().parent.as_uri() + "/" + _href(rel)


def open_page(driver, url: str) -> None:
    driver.get(url)
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(driver, 15).until(
        lambda d: d.execute_script("return document.documentElement.getAttribute('data-report-ready')") == "1"
    )


def assert_nothing_ran(driver) -> None:
    from selenium.common.exceptions import NoAlertPresentException

    assert driver.execute_script("return typeof window.__pwned") == "undefined"
    with pytest.raises(NoAlertPresentException):
        driver.switch_to.alert.text  # noqa: B018 - raises when no alert is open
    problems = [
        e["message"]
        for e in driver.get_log("browser")
        if e["level"] == "SEVERE" or "Content Security Policy" in e["message"]
    ]
    assert problems == []


def heatmap_loaded(driver) -> bool:
    return driver.execute_script(
        "const i = document.getElementById('heatmap'); return !!i && i.complete && i.naturalWidth > 100;"
    )


@pytest.mark.parametrize("via", ["file", "http"])
def test_round_page_shows_heatmap_rows_narrative_and_runs_no_injected_script(browser, site, server, via):
    from selenium.webdriver.common.by import By

    store, out = site
    record = json.loads(LocalStore(store).get(keys.evaluation(stores.HOSTILE_ROUND)))
    url = (
        file_url(out, round_page(stores.HOSTILE_ROUND))
        if via == "file"
        else server + round_page(stores.HOSTILE_ROUND).replace("%", "%25")
    )
    open_page(browser, url)
    assert heatmap_loaded(browser)
    rows = browser.find_elements(By.CSS_SELECTOR, "#responses tbody tr")
    # a lone surrogate cannot be UTF-8: the page shows U+FFFD in its place
    assert [r.get_attribute("data-miner") for r in rows] == [_visible(m) for m in stores.HOSTILE_MINERS]
    assert [r.get_attribute("class") for r in rows] == [
        "in" if x["in_consensus"] else "out" for x in record["responses"]
    ]
    composite = [r.find_elements(By.TAG_NAME, "td")[2].text for r in rows]
    assert composite == [f"{x['score']['composite']:.1f}" for x in record["responses"]]
    narrative = browser.find_element(By.ID, "narrative-text").get_attribute("textContent")
    assert narrative == record["narrative"]["text"] and narrative.strip()
    answers = [a.get_attribute("textContent") for a in browser.find_elements(By.CSS_SELECTOR, ".answer-text")]
    assert answers == list(stores.HOSTILE_TEXTS)
    assert browser.find_element(By.ID, "prompt-text").text == stores.HOSTILE_PROMPT
    assert browser.find_elements(By.CSS_SELECTOR, "main script, main img:not(#heatmap), main svg") == []
    assert_nothing_ran(browser)


def test_index_sorts_and_filters_rounds(browser, site):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    _, out = site
    open_page(browser, file_url(out, "index.html"))

    def shown():
        return [
            r.get_attribute("data-round")
            for r in browser.find_elements(By.CSS_SELECTOR, "#rounds tbody tr")
            if r.is_displayed()
        ]

    assert len(shown()) == 23 and shown()[-1] == stores.HOSTILE_ROUND
    score_header = browser.find_elements(By.CSS_SELECTOR, "#rounds thead th")[4]
    score_header.click()
    scores = [
        float(r.find_elements(By.TAG_NAME, "td")[4].get_attribute("data-sort"))
        for r in browser.find_elements(By.CSS_SELECTOR, "#rounds tbody tr")
    ]
    assert scores == sorted(scores)
    score_header.click()
    scores = [
        float(r.find_elements(By.TAG_NAME, "td")[4].get_attribute("data-sort"))
        for r in browser.find_elements(By.CSS_SELECTOR, "#rounds tbody tr")
    ]
    assert scores == sorted(scores, reverse=True) and score_header.get_attribute("aria-sort") == "descending"
    Select(browser.find_element(By.ID, "rounds-reached")).select_by_value("no")
    not_reached = shown()
    assert not_reached and all(
        not json.loads(LocalStore(site[0]).get(keys.evaluation(rid)))["consensus"]["reached"] for rid in not_reached
    )
    Select(browser.find_element(By.ID, "rounds-reached")).select_by_value("")
    browser.find_element(By.ID, "rounds-filter").send_keys("boiling point")
    assert shown() == ["r-0001"]
    assert browser.find_element(By.ID, "rounds-count").text == "1 of 23 shown"
    assert_nothing_ran(browser)


def test_miner_page_of_a_script_named_miner_shows_its_plot_and_id_as_text(browser, site):
    from selenium.webdriver.common.by import By

    _, out = site
    open_page(browser, file_url(out, miner_page(stores.SCRIPT_MINER)))
    assert browser.find_element(By.ID, "miner-id").text == stores.SCRIPT_MINER
    assert browser.execute_script(
        "const i = document.getElementById('history'); return i.complete && i.naturalWidth > 100;"
    )
    links = browser.find_elements(By.CSS_SELECTOR, "#miner-rounds tbody a")
    assert [a.text for a in links] == [stores.HOSTILE_ROUND]
    links[0].click()
    open_page(browser, browser.current_url)
    assert browser.find_element(By.ID, "round-id").text == stores.HOSTILE_ROUND and heatmap_loaded(browser)
    assert_nothing_ran(browser)


def test_the_harness_sees_a_script_that_runs_and_the_csp_blocks_one(browser, tmp_path):
    from validator.report import CSP

    script = "<script>window.__pwned = 1</script>"
    open_csp = tmp_path / "open.html"
    open_csp.write_text(f"<!DOCTYPE html><html><head></head><body>{script}</body></html>", encoding="utf-8")
    locked = tmp_path / "locked.html"
    locked.write_text(
        f'<!DOCTYPE html><html><head><meta http-equiv="Content-Security-Policy" content="{CSP}">'
        f"</head><body>{script}</body></html>",
        encoding="utf-8",
    )
    browser.get(open_csp.as_uri())
    assert browser.execute_script("return typeof window.__pwned") == "number"  # what a missed escape looks like
    browser.get(locked.as_uri())
    assert browser.execute_script("return typeof window.__pwned") == "undefined"  # the CSP's second line of defence
    assert any("Content Security Policy" in e["message"] for e in browser.get_log("browser"))


def test_yes_no_labels_factual_verdicts_and_the_whatif_link(browser, tmp_path):
    from selenium.webdriver.common.by import By

    from storage import MemoryStore
    from tests.report.test_builder import whatif_doc, yes_no_round

    store = MemoryStore()
    record = yes_no_round()
    store.put(keys.evaluation(record.round_id), json.dumps(record.to_json()).encode())
    out = tmp_path / "site"
    build_report(store, out, whatif=whatif_doc())
    open_page(browser, file_url(out, "index.html"))
    browser.find_element(By.CSS_SELECTOR, "#whatif-link a").click()
    open_page(browser, browser.current_url)
    assert browser.find_element(By.TAG_NAME, "h1").text == "What-if threshold-0.95"
    assert_nothing_ran(browser)

    open_page(browser, file_url(out, round_page(record.round_id)))
    cells = browser.find_elements(By.CSS_SELECTOR, "#responses tbody td.yes-no")
    assert [c.text for c in cells] == ["yes", "yes", "yes", "yes", "no", "—"]
    yes, no = (cells[0].value_of_css_property("color"), cells[4].value_of_css_property("color"))
    assert yes != no  # the dissenter stands out in a round where every member is "in"
    factual = [c.text for c in browser.find_elements(By.CSS_SELECTOR, "#responses tbody td.factual")]
    assert factual[0] == "2 of 3 other checked members agree" and factual[3] == "no other checked member agrees"
    assert factual[4].startswith("not checked: the round's LM budget")
    assert browser.find_element(By.ID, "yes-no").text == "majority yes; they split (no 1, yes 4)"
    assert all(c.is_displayed() for c in cells)
    assert_nothing_ran(browser)


@pytest.mark.parametrize("window_width", [1280, 760])
def test_the_heatmap_fits_the_page(browser, site, window_width):
    _, out = site
    browser.set_window_size(window_width, 900)
    try:
        open_page(browser, file_url(out, round_page(stores.HOSTILE_ROUND)))
        assert heatmap_loaded(browser)
        fit = browser.execute_script(
            "const i = document.getElementById('heatmap'), r = i.getBoundingClientRect();"
            "return [r.left, r.right, document.documentElement.clientWidth, i.naturalWidth, i.clientWidth];"
        )
        left, right, page_width, natural, shown = fit
        assert left >= 0 and right <= page_width + 0.5, fit  # nothing of it (nor its caption) is cut off
        assert shown <= natural  # scaled down to fit, never up
    finally:
        browser.set_window_size(1280, 900)
