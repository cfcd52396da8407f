import pytest

from uefast import MeasureParseError, parse_measure, parse_measures
from uefast.measures import REGISTRY

ROUND_TRIP = [
    "nDCG@10", "nDCG", "nDCG(gain=exp)@10", "DCG@5", "AP", "AP@10", "AP(norm=k)@10",
    "AP(norm=min)@5", "SP@10", "P@10", "P(rel=2)@10", "R@100", "Rprec", "RR", "RR@10", "Success@10", "Success(rel=2)@5",
    "ERR@20", "ERR(lmax=4)@20", "RBP(p=0.8)", "RBP(p=0.5)@100", "AP(rel=2)",
]


@pytest.mark.parametrize("text", ROUND_TRIP)
def test_round_trip(text):
    m = parse_measure(text)
    assert str(m) == text
    assert parse_measure(str(m)) == m
    assert hash(parse_measure(text)) == hash(m)


@pytest.mark.parametrize("alias,canonical", [
    ("NDCG@10", "nDCG@10"), ("MAP", "AP"), ("PaperAP@10", "AP(norm=k)@10"), ("MSP@10", "SP@10"),
    ("P(rel=1)@10", "P(rel=1)@10"), ("RBP", "RBP(p=0.8)"), ("nDCG(gain=lin)@3", "nDCG@3"),
    (" P @ 5 ", "P@5"), ("MRR@10", "RR@10"), ("Hit@5", "Success@5"),
    ("nDCG(dcg='exp-log2')@10", "nDCG(gain=exp)@10"), ('DCG(dcg="log2")@5', "DCG@5"),
    ("nDCG(dcg=exp-log2)", "nDCG(gain=exp)"), ("P(rel='2')@5", "P(rel=2)@5"),
])
def test_aliases_and_defaults(alias, canonical):
    assert str(parse_measure(alias)) == canonical
    assert parse_measure(alias) == parse_measure(canonical)


def test_matmul_sets_cutoff():
    assert parse_measure("nDCG") @ 10 == parse_measure("nDCG@10")


@pytest.mark.parametrize("text,match", [
    ("Foo@10", "unknown measure 'Foo'"),
    ("P", "P needs a cutoff"),
    ("Rprec@10", "Rprec takes no cutoff"),
    ("P@0", "cutoff must be a positive integer"),
    ("P@x", "cutoff must be a positive integer"),
    ("nDCG(gain=cubic)@10", "`gain` must be one of"),
    ("P(rel=a)@10", "`rel` must be an integer"),
    ("RBP(p=1.5)", r"`p` must be in \(0, 1\)"),
    ("nDCG(foo=1)@10", "unknown parameter `foo`"),
    ("AP(norm=k)", "needs a cutoff"),
    ("P(rel)@10", "must be in format"),
    ("nDCG@@10", "cutoff must be a positive integer"),
    ("nDCG(gain=exp", "must be in format"),
    ("nDCG(dcg=exp)@10", r"`dcg` \(ir_measures' spelling of `gain`\) must be one of"),
    ("Success", "Success needs a cutoff"),
    ("P(rel=0)@5", "`rel` must be an integer >= 1, got 0"),
    ("P(rel=2,rel=3)@5", "parameter `rel` given twice"),
    ("nDCG(gain=exp,dcg=log2)@5", "parameter `gain` given twice"),
    ("AP(rel=-1)", "`rel` must be an integer >= 1, got -1"),
    ("ERR(lmax=0)@10", "`lmax` must be an integer >= 1, got 0"),
    (f"P@{2 ** 63}", r"positive integer \(at most 2\^63 - 1\), got 9223372036854775808"),
])
def test_parse_errors_name_the_problem(text, match):
    with pytest.raises(MeasureParseError, match=match):
        parse_measure(text)


def test_parse_measures_splits_and_dedupes():
    ms = parse_measures("nDCG@10 AP NDCG@10")
    assert [str(m) for m in ms] == ["nDCG@10", "AP"]
    with pytest.raises(MeasureParseError, match="at least one"):
        parse_measures([])


def test_every_registered_measure_parses():
    for name, d in REGISTRY.items():
        text = name + ("@5" if d.cutoff == "required" else "")
        assert parse_measure(text).name == name


def test_measure_lists_split_outside_parentheses():
    """`-m "nDCG@10 AP"` (one shell word) was refused; a space inside parentheses splits nothing."""
    from uefast.measures import parse_measures

    assert [str(m) for m in parse_measures("nDCG@10  RBP(p=0.8, rel=2)\tAP")] == ["nDCG@10", "RBP(p=0.8,rel=2)", "AP"]
    assert [str(m) for m in parse_measures(["nDCG@10 AP", "P(rel=2)@5"])] == ["nDCG@10", "AP", "P(rel=2)@5"]


def test_measure_objects_built_directly_are_checked_and_canonical():
    """Measure(...) checks its parameters as the parser does and fills in defaults, so it equals
    the parsed string and cannot smuggle a value the parser refuses into evaluate (P@-3 gave
    -0.667, RBP(p=1.5) negative values, Measure('P') a ZeroDivisionError)."""
    from uefast import MeasureParseError
    from uefast.measures import Measure

    assert Measure("nDCG", 10) == parse_measure("nDCG@10")
    assert hash(Measure("nDCG", 10)) == hash(parse_measure("nDCG@10"))
    assert Measure("RBP", None, (("rel", 2), ("p", 0.5))) == parse_measure("RBP(rel=2,p=0.5)")
    assert parse_measures([Measure("P", 10), "P@10"]) == [parse_measure("P@10")]
    bad = [(("P", -3), "cutoff must be a positive integer"),
           (("P", True), "cutoff must be a positive integer"),
           (("RBP", 5, (("p", 1.5),)), r"`p` must be in \(0, 1\), got 1.5"),
           (("Rprec", 2), "Rprec takes no cutoff"),
           (("P",), "P needs a cutoff"),
           (("AP", None, (("norm", "k"),)), r"AP\(norm=...\) needs a cutoff"),
           (("nDCG", 10, (("gain", "foo"),)), "`gain` must be one of"),
           (("P", 3, (("rel", 0),)), "`rel` must be an integer >= 1"),
           (("Foo",), "unknown measure 'Foo'")]
    for args, match in bad:
        with pytest.raises(MeasureParseError, match=match):
            Measure(*args)


@pytest.mark.parametrize("text, match", [
    ("PaperAP(norm=min)@5", r"PaperAP is AP\(norm=k\); `norm` cannot be set"),
    ("P@1_0", "cutoff must be a positive integer, got '1_0'"),
    ("P@\u0665", "cutoff must be a positive integer"),  # an Arabic-Indic digit
    ("RBP(p=\uff10.5)", "`p` must be a number"),  # a full-width zero
    ("RBP(p=0_5)", "`p` must be a number, got '0_5'"),
    ("P(rel=1_0)@5", "`rel` must be an integer"),
    ("RBP(p=0.9999999999999999999)", "rounds to 1.0 in double precision"),
])
def test_numbers_in_measure_strings_are_plain_ascii(text, match):
    """Python's int()/float() accept '1_0', non-ASCII digits and full-width digits; measure strings
    do not, and an alias's fixed parameter is not silently overridden."""
    with pytest.raises(MeasureParseError, match=match):
        parse_measure(text)
