"""Revisited Oxford/Paris and INSTRE protocols from Python: the numbers of
``tailrank eval --protocol`` (the formula is checked against revisitop in the Rust tests)."""

import json

import pytest

import tailrank


def test_revisited_protocols(tmp_path):
    gt = tmp_path / "gnd.json"
    # q: easy a, hard c, junk b; ranking a b d c. Easy (b, c junk): a first -> 1. Medium (b
    # removed): a at 0, c at 2 -> (1 + (1/2 + 2/3)/2)/2. Hard (b, a removed): c at 1 -> 1/4
    # (revisitop's AP averages the precisions before and after each positive).
    gt.write_text(json.dumps({"q": {"easy": ["a"], "hard": ["c"], "junk": ["b"]}}))
    results = {"q": {"a": 0.9, "b": 0.8, "d": 0.75, "c": 0.7}}
    r = tailrank.evaluate_revisited(results, gt)
    got = {p["protocol"]: p["map"] for p in r["protocols"]}
    assert list(got) == ["easy", "medium", "hard"]
    assert got["easy"] == pytest.approx(1.0)
    assert got["medium"] == pytest.approx((1 + (1 / 2 + 2 / 3) / 2) / 2)
    assert got["hard"] == pytest.approx(0.25)
    plain = tailrank.evaluate_revisited(results, str(gt), ["plain"])
    assert plain["protocols"][0]["protocol"] == "plain"
    with pytest.raises(tailrank.TailrankError, match="unknown protocol"):
        tailrank.evaluate_revisited(results, gt, ["extreme"])
    with pytest.raises(tailrank.TailrankError):
        tailrank.evaluate_revisited({}, gt)
    assert tailrank.evaluate_revisited({}, gt, missing_as_zero=True)["protocols"][0]["map"] == 0.0
    with pytest.raises(tailrank.OptionError, match="missing_as_zero must be True or False"):
        tailrank.evaluate_revisited({}, gt, missing_as_zero="no")
