import pytest

from storage import keys

HOSTILE = [
    "../../etc/passwd",
    "",
    ".",
    "..",
    "a/b",
    "a\\b",
    "C:\\x",
    "\x00nul",
    "<script>alert(1)</script>",
    "5FHneW46xGXgs5mUiveU4sbTyGBzmstUspZC92UhjJM694ty",
    "ünïcødé-ключ",
    "\ud800",
    "x" * 1000,
    "x" * 999 + "y",
    "%2F",
    "/",
    "a b",
]


@pytest.mark.parametrize("value", HOSTILE)
def test_component_is_one_safe_segment(value):
    c = keys.component(value)
    assert c and "/" not in c and "\\" not in c and c not in (".", "..") and not c.startswith(".")
    assert len(c) <= keys.MAX_COMPONENT
    assert all(32 < ord(ch) < 127 for ch in c)
    keys.check(keys.evaluation(value))


def test_components_stay_distinct():
    encoded = [keys.component(v) for v in HOSTILE]
    assert len(set(encoded)) == len(HOSTILE)


def test_layout():
    assert keys.evaluation("r-0001") == "rounds/r-0001/evaluation.json"
    assert keys.heatmap("r 1") == "rounds/r%201/heatmap.png"
    assert keys.round_input("a.b") == "rounds/a%2Eb/input.json"


@pytest.mark.parametrize("bad", ["", "/abs", "a/../b", "a//b", "a/./b", "a\\b", "a\x00"])
def test_check_rejects_unsafe_keys(bad):
    with pytest.raises(ValueError):
        keys.check(bad)


def test_weight_submissions_live_under_chain_by_netuid():
    key = keys.weights_attempt(7, "20261201T120000.000000Z-b1234")
    assert key == "chain/7/weights/20261201T120000%2E000000Z-b1234.json" and key.startswith(keys.weights_prefix(7))
    assert keys.parse(key) is None  # not a round's file
    for bad in (-1, True, "7"):
        with pytest.raises(ValueError):
            keys.weights_prefix(bad)
