"""trec_eval 10.0's stop at a qrels topic that has no results (without ``-c``).

trec_eval 10.0 (``trec_eval.c``, the loop over ``all_rel_info``) evaluates the qrels topics in
order (qids sorted by ``strcmp``); without ``-c`` a topic that the run does not retrieve for
ends the program: ``trec_eval: result qid '<qid>' not found in qrels`` on stderr, exit status
4.  The per-topic lines (``-q``) of the topics evaluated before it are already on stdout; no
summary is printed.  trec_eval 9.0.8 skips such topics instead (averages over the topics with
results), and with ``-c`` both versions average over every qrels topic.
"""
from __future__ import annotations

import dataclasses

#: trec_eval 10.0's exit status there
EXIT_STATUS = 4


def stop_point(result, *, version: str, complete: bool):
    """``(qid, k)`` where trec_eval ``version`` stops (the first qrels topic without results and
    the number of topics printed before it), or ``None`` where it runs to the end."""
    if version != "10.0" or complete:
        return None
    return result.prepared.first_unretrieved


def head(result, k: int, extra=None):
    """``result`` (and ``--ue``'s ``extra``) cut to its first ``k`` topics, for the per-topic
    lines trec_eval 10.0 printed before it stopped."""
    slots = [dataclasses.replace(s, per_query=None if s.per_query is None else s.per_query[:k])
             for s in result.slots]
    cut = dataclasses.replace(result, qids=result.qids[:k], slots=slots)
    if extra is None:
        return cut, None
    return cut, {name: [(n, pq[:k], sm) for n, pq, sm in lines] for name, lines in extra.items()}


def message(qid: str, run_path: str) -> str:
    """One line: what happened, trec_eval's own words, and the two ways on."""
    return (f"qrels topic {qid!r} has no results in {run_path} (trec_eval 10.0: \"result qid "
            f"'{qid}' not found in qrels\", exit status {EXIT_STATUS}); add -c to score such topics 0, "
            f"or --trec-eval-version 9.0.8 to leave them out")
