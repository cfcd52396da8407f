"""Text-generation measure strings: ``ROUGE-<n>``, ``ROUGE-L``, ``ROUGE-Lsum`` and ``BERTScore``,
each with an optional parameter list, e.g. ``ROUGE-1(score=recall)``,
``BERTScore(score=precision,reb=sampled)``.

* ``score``: ``f1`` (default), ``precision`` or ``recall`` (aliases ``f``/``fmeasure``,
  ``p``, ``r``).
* BERTScore only: ``reb`` = ``exact`` (default, SPEC_text §5.3), ``sampled`` (seeded Monte
  Carlo under the same unigram model) or ``algorithm1`` (the dissertation's Algorithm 1, §5.2);
  ``iub`` = ``one`` (default).

rouge-score's type names (``rouge1``, ``rougeL``, ``rougeLsum``) are accepted. ``str(m)`` is
the canonical form (defaults left out) and parses back to an equal measure.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from uefast.errors import MeasureParseError
from uefast.text.rouge import Variant

__all__ = ["TextMeasure", "parse_text_measure", "parse_text_measures"]

SCORES = {"f1": "f1", "f": "f1", "fmeasure": "f1", "precision": "precision", "p": "precision",
          "recall": "recall", "r": "recall"}
BERT_PARAMS = {"reb": ("exact", "sampled", "algorithm1"), "iub": ("one",)}
_FORMAT = ("expected ROUGE-<n>, ROUGE-L, ROUGE-Lsum or BERTScore, optionally with parameters "
           "as in ROUGE-1(score=recall) or BERTScore(score=precision,reb=sampled)")
_RE = re.compile(r"^\s*([A-Za-z][A-Za-z0-9-]*)\s*(?:\((.*)\))?\s*$")
_ROUGE = re.compile(r"^(?:ROUGE-?|rouge-?)([0-9]+|L|Lsum)$")


@dataclass(frozen=True)
class TextMeasure:
    """A parsed text measure: ``family`` "ROUGE" (with ``variant``) or "BERTScore"."""

    family: str
    variant: Variant | None
    score: str = "f1"
    reb: str = "exact"
    iub: str = "one"

    def __str__(self) -> str:
        name = str(self.variant) if self.family == "ROUGE" else "BERTScore"
        params = []
        if self.score != "f1":
            params.append(f"score={self.score}")
        if self.family == "BERTScore":
            if self.reb != "exact":
                params.append(f"reb={self.reb}")
            if self.iub != "one":
                params.append(f"iub={self.iub}")
        return name + (f"({','.join(params)})" if params else "")


def parse_text_measure(s: str | TextMeasure) -> TextMeasure:
    """Parse one measure string (see the module docstring)."""
    if isinstance(s, TextMeasure):
        return s
    if not isinstance(s, str):
        raise MeasureParseError(f"measure must be a string; got {s!r}")
    m = _RE.match(s)
    if not m:
        raise MeasureParseError(f"cannot parse measure {s!r}: {_FORMAT}")
    name, args = m.group(1), m.group(2)
    params: dict[str, str] = {}
    if args is not None and args.strip():
        for part in args.split(","):
            k, eq, v = part.partition("=")
            k, v = k.strip(), v.strip().strip("'\"")
            if not eq or not k or not v:
                raise MeasureParseError(f"cannot parse parameter {part.strip()!r} of {s!r}: "
                                        f"{_FORMAT}")
            if k in params:
                raise MeasureParseError(f"parameter {k!r} given twice in {s!r}")
            params[k] = v
    score = params.pop("score", "f1")
    if score not in SCORES:
        raise MeasureParseError(f"score must be one of f1, precision, recall in {s!r}; "
                                f"got {score!r}")
    score = SCORES[score]
    r = _ROUGE.match(name)
    if r:
        if params:
            raise MeasureParseError(f"unknown parameter(s) {sorted(params)} for {name} in {s!r}; "
                                    "ROUGE takes only score=")
        g = r.group(1)
        if g.isdigit():
            if int(g) < 1:
                raise MeasureParseError(f"ROUGE-N needs n >= 1 in {s!r}")
            return TextMeasure("ROUGE", Variant("N", int(g)), score)
        return TextMeasure("ROUGE", Variant(g), score)
    if name.lower() == "bertscore":
        kw = {}
        for k, v in params.items():
            if k not in BERT_PARAMS:
                raise MeasureParseError(f"unknown parameter {k!r} for BERTScore in {s!r}; "
                                        "it takes score=, reb=, iub=")
            if v not in BERT_PARAMS[k]:
                raise MeasureParseError(f"BERTScore {k} must be one of {BERT_PARAMS[k]} in {s!r}; "
                                        f"got {v!r}")
            kw[k] = v
        return TextMeasure("BERTScore", None, score, **kw)
    raise MeasureParseError(f"unknown measure {name!r} in {s!r}: {_FORMAT}")


def parse_text_measures(measures) -> list[TextMeasure]:
    """Parse a string or a sequence of strings; refuse an empty list and repeats."""
    if isinstance(measures, (str, TextMeasure)):
        measures = [measures]
    out = [parse_text_measure(m) for m in measures]
    if not out:
        raise MeasureParseError("no measures given")
    seen = set()
    for m in out:
        if str(m) in seen:
            raise MeasureParseError(f"measure {str(m)!r} requested twice")
        seen.add(str(m))
    return out
