"""Tie-breaking order: docids compared as trec_eval does (strcmp on the docno bytes)."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from uefast.kernels.ordering import _int_str_compare

INT64 = st.integers(-(2**63) + 1, 2**63 - 1)
EDGES = st.sampled_from([0, 1, 9, 10, 11, 19, 99, 100, 101, 990, -1, -9, -10, -100,
                         10**18, 2**63 - 1, -(2**63) + 1])


@settings(max_examples=3000, deadline=None)
@given(st.one_of(INT64, EDGES, st.integers(-1000, 1000)), st.one_of(INT64, EDGES, st.integers(-1000, 1000)))
def test_integer_docids_compare_as_their_decimal_strings(a, b):
    sa, sb = str(a).encode(), str(b).encode()
    assert _int_str_compare(a, b) == (sa > sb) - (sa < sb)
