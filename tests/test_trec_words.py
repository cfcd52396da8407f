"""The word-at-a-time run scanner (:mod:`uefast.io._words`) against the byte scanner it stands in
front of (``uefast.io._fast._scan_run``, the reference): the same arrays, offsets, hashes and
score bits for every file it takes; on every file it declines, the byte scanner's result; and it
must take every plain file the byte scanner accepts (else the fast path would silently be off)."""
from __future__ import annotations

import random
import struct

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from uefast.io import _fast, _words
from uefast.io._floatparse import _POW5
from uefast.io._hashtab import _dkey


def _same(a, b):
    assert len(a) == len(b)
    for k, (x, y) in enumerate(zip(a, b)):
        if isinstance(x, np.ndarray):
            assert x.dtype == y.dtype and np.array_equal(x, y), f"output {k} differs"
        else:
            assert x == y, f"output {k}: {x!r} != {y!r}"


def _plain_text(data: bytes) -> bool:
    return all(b < 128 and not (b < 9 or 13 < b < 32) for b in data)


def _check(data: bytes):
    buf = np.frombuffer(data, np.uint8)
    for strict in (False, True):
        for full in (False, True):
            ref = _fast._scan_run(buf, strict, full, _POW5)
            got = _words.scan_run_words(buf, strict, full, _POW5)
            if got[0]:
                _same(got, ref)
            else:
                assert all(getattr(x, "size", 0) == 0 for x in got[1:11])
                # a plain file the byte scanner takes must be taken here too
                assert not (ref[0] and _plain_text(data)), "declined a plain, valid file"
            _same(_fast.scan_run(buf, strict, full), ref)


_QID = st.sampled_from(["1", "301", "q-7", "ABCDEFGHIJ", "x" * 20, "#1"])
_DOC = st.text(st.characters(min_codepoint=33, max_codepoint=126), min_size=1, max_size=40)
_RANK = st.one_of(st.integers(-10**6, 10**9).map(str),
                  st.sampled_from(["+5", "007", "12345678", "123456789", "1234567890123456789012",
                                   "1.5", "abc", "-", "--1", "0"]))


def _score_text(x: float, style: int) -> str:
    return [repr(x), f"{x:.3f}", f"{x:.17g}", f"{x:e}", f"{x:.0f}", f"{x:.20f}"][style]


_SCORE = st.one_of(
    st.builds(_score_text, st.floats(allow_nan=False, allow_infinity=False, width=64), st.integers(0, 5)),
    st.builds(_score_text, st.floats(-1e4, 1e4), st.integers(0, 5)),
    st.sampled_from(["-0", "+1.5", ".5", "5.", "-.5", "1e5", "nan", "inf", "-inf", "1.2.3", "--1", ".",
                     "0.000000000000000000001234", "12345678901234567890", "1234567890123456789",
                     "9007199254740993", "0.1e-3", "0x10", "1_0", "9" * 19 + ".5", "49.19109429178723"]))
_SEP = st.sampled_from([" ", "\t", "  ", " \t", "\t\t", "\x0b", "\x0c", " \r "])
_END = st.sampled_from(["\n", "\n", "\n", "\r\n", " \n", "\t\n", " extra\n", " x y\n"])


@st.composite
def _run_text(draw):
    lines = []
    for _ in range(draw(st.integers(0, 12))):
        kind = draw(st.integers(0, 19))
        if kind == 0:
            lines.append(draw(st.sampled_from(["\n", "   \n", "# comment\n", "  # c d e\n", "\t\n"])))
            continue
        fields = [draw(_QID), draw(st.sampled_from(["Q0", "0", "q0x"])), draw(_DOC), draw(_RANK),
                  draw(_SCORE), draw(st.sampled_from(["run", "sysA", "R" * 12]))]
        if kind == 1:
            fields = fields[:draw(st.integers(1, 5))]  # too few fields
        lead = draw(st.sampled_from(["", "", "", " ", "\t"]))
        line = lead + "".join(f + draw(_SEP) for f in fields[:-1]) + fields[-1] + draw(_END)
        lines.append(line)
    text = "".join(lines)
    if text and draw(st.booleans()):
        text = text.rstrip("\n")  # no final newline: the last field ends at the buffer's end
    odd = draw(st.sampled_from(["", "", "", "", "\x01", "\xe9", "\x1f"]))
    if odd and text:
        p = draw(st.integers(0, len(text) - 1))
        text = text[:p] + odd + text[p:]
    return text.encode("utf-8")


@pytest.mark.slow  # 1,500 Hypothesis examples
@settings(max_examples=1500, deadline=None)
@given(_run_text())
def test_words_scanner_equals_byte_scanner(data):
    _check(data)


@pytest.mark.parametrize("data", [
    b"", b"\n", b"1 Q0 d 1 2 r", b"1 Q0 d 1 2 r\n", b"1 Q0 d 1 2", b"# only\n",
    b"1 Q0 ABCDEFGH 1 0.5 r\n", b"1 Q0 ABCDEFGHIJKLMNOP 1 0.5 r\n",  # 8- and 16-byte docnos
    b"1 Q0 d 12345678 1.25 r\n1 Q0 e 99999999 -1.25 r",  # 8-digit ranks, last field at the end
    b"7\tQ0\tDOC\t0\t1234567890123456789\tR\r\n",  # 19 digits: past 2^53, Eisel-Lemire
])
def test_words_scanner_edge_files(data):
    _check(data)


def test_words_scanner_takes_plain_runs():
    rng = random.Random(3)
    lines = [f"{300 + q}\tQ0\tLA{rng.randrange(10**6):06d}-{d:04d}\t{d}\t{rng.uniform(-50, 50)!r}\tsys"
             for q in range(20) for d in range(50)]
    data = ("\n".join(lines) + "\n").encode()
    got = _words.scan_run_words(np.frombuffer(data, np.uint8), True, True, _POW5)
    assert got[0] and got[1].size == len(lines)
    _check(data)


def test_score_bits_correctly_rounded():
    """The Clinger / Eisel-Lemire split against Python's correctly rounded float()."""
    rng = random.Random(11)
    strs = []
    for _ in range(20000):
        k = rng.random()
        if k < 0.4:
            s = repr(rng.uniform(-1000, 1000))
        elif k < 0.7:
            nd = rng.randint(1, 19)
            s = "".join(rng.choice("0123456789") for _ in range(nd))
            p = rng.randint(0, nd)
            s = s[:p] + "." + s[p:]
        else:
            s = repr(struct.unpack("d", struct.pack("Q", rng.getrandbits(63)))[0])
            if "e" in s or "n" in s or len(s.replace(".", "").lstrip("-")) > 19:
                continue
        strs.append(s if rng.random() < 0.7 else "-" + s.lstrip("-"))
    strs += ["9007199254740992", "9007199254740993", "0.9007199254740993", "1" * 19, "0." + "9" * 18, "-0"]
    data = np.frombuffer(("\t".join(strs) + "\t").encode(), np.uint8)
    p = 0
    for s in strs:
        ok, bits = _words._score_bits(data, p, p + len(s), data.size, _POW5)
        assert ok, s
        assert bits == np.float64(float(s)).view(np.uint64), s
        p += len(s) + 1


@settings(max_examples=1500, deadline=None)
@given(text=st.text(st.sampled_from("0123456789.-+e/: "), min_size=1, max_size=20).filter(lambda t: " " not in t)
       | st.from_regex(r"-?[0-9]{0,17}(\.[0-9]{0,17})?", fullmatch=True).filter(bool),
       before=st.sampled_from(["", "x\t", "1234567\t"]), after=st.sampled_from(["", "\t9", " .5", "\n"]))
def test_score_bits_short_and_long_fields(text, before, after):
    """``_score_bits`` (the loop-free reading of fields up to 16 bytes, digit runs beyond) takes
    exactly the ``-?d*(.d*)?`` fields with 1..19 digits, and gives Python's ``float``; any
    other field (two points, an inner sign, other bytes, no digit) is declined; fields at any
    offset, followed by more text or by the end of the buffer."""
    import re

    data = np.frombuffer((before + text + after).encode(), np.uint8)
    ok, bits = _words._score_bits(data, len(before), len(before) + len(text), data.size, _POW5)
    m = re.fullmatch(r"-?([0-9]*)(?:\.([0-9]*))?", text)
    valid = bool(m) and 1 <= len(m.group(1)) + len(m.group(2) or "") <= 19
    assert ok == valid, text
    if ok:
        assert bits == np.float64(float(text)).view(np.uint64), text


def test_docno_key_equals_dkey():
    rng = random.Random(5)
    for ln in range(1, 41):
        for _ in range(20):
            doc = "".join(chr(rng.randint(33, 126)) for _ in range(ln)).encode()
            data = np.frombuffer(b"#" + doc + b" tail", np.uint8)  # offset 1: unaligned
            assert _words._docno_key(data, 1, 1 + ln, data.size) == _dkey(data, 1, 1 + ln)
            end = np.frombuffer(doc, np.uint8)  # ends at the buffer's end: the tail-load path
            assert _words._docno_key(end, 0, ln, end.size) == _dkey(end, 0, ln)


def test_scan_run_takes_strided_buffers():
    """A non-contiguous byte view goes to the byte scanner (the word loads need contiguous
    memory) and gives the same result as a contiguous copy."""
    data = b"1 Q0 d1 1 0.5 r\n1 Q0 d2 2 0.25 r\n"
    wide = np.zeros(2 * len(data), np.uint8)
    wide[::2] = np.frombuffer(data, np.uint8)
    strided = wide[::2]
    assert not strided.flags.c_contiguous
    _same(_fast.scan_run(strided, False), _fast.scan_run(np.frombuffer(data, np.uint8), False))


def test_plain_is_every_byte_ascii_and_whitespace_only_9_to_13_or_32():
    """``_plain`` (eight bytes at a time) against the byte-by-byte rule: each of the 256 byte
    values at each position of a word, in the tail after the last whole word, beside high bytes
    (carries), and in buffers of every length 0..17."""
    base = b"301 Q0 DOC-1 1 2.5 run\n"
    for v in range(256):
        for pos in range(len(base)):
            data = base[:pos] + bytes([v]) + base[pos + 1:]
            assert _words._plain(np.frombuffer(data, np.uint8)) == _plain_text(data), (v, pos)
    for v in range(256):  # a bad byte after a byte >= 128 that would carry into it
        data = bytes([0xFF, v]) + b"abcdefgh"
        assert not _words._plain(np.frombuffer(data, np.uint8))
    for n in range(18):
        data = b"a \t\n\r" * 4
        assert _words._plain(np.frombuffer(data[:n], np.uint8))
        assert not _words._plain(np.frombuffer(data[:n] + b"\x1f", np.uint8))
