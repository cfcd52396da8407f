"""Where the first-ever (cold Numba cache) command spends its compile time.

    NUMBA_CACHE_DIR=$(mktemp -d) python benchmarks/compile_profile.py trec_eval QRELS RUN
    NUMBA_CACHE_DIR=$(mktemp -d) python benchmarks/compile_profile.py evaluate

Runs ``uefast <args>`` in this process (stdout discarded) with a listener on Numba's
``numba:compile`` events, then prints to stderr the wall and CPU time of the command and each
compiled function's own compile time (nested compilations of callees are subtracted), largest
first. With a warm cache nothing compiles and the list is empty.
"""
from __future__ import annotations

import contextlib
import io
import sys
import time
from collections import defaultdict


def main(argv):
    t0, c0 = time.perf_counter(), time.process_time()
    from numba.core import event

    own = defaultdict(float)
    count = defaultdict(int)
    stack = []

    class Listener(event.Listener):
        def on_start(self, ev):
            stack.append([time.perf_counter(), 0.0])

        def on_end(self, ev):
            start, child = stack.pop()
            total = time.perf_counter() - start
            disp = ev.data["dispatcher"]
            name = f"{disp.py_func.__module__}.{disp.py_func.__qualname__}"
            own[name] += total - child
            count[name] += 1
            if stack:
                stack[-1][1] += total

    from uefast.cli import main as cli

    with event.install_listener("numba:compile", Listener()), \
            contextlib.redirect_stdout(io.StringIO()):
        code = cli(argv)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    print(f"exit {code}; wall {wall:.2f} s, CPU {cpu:.2f} s; compiled {sum(count.values())} "
          f"signatures of {len(own)} functions in {sum(own.values()):.2f} s", file=sys.stderr)
    for name, sec in sorted(own.items(), key=lambda kv: -kv[1]):
        print(f"{sec:7.2f} s  x{count[name]:<3d} {name}", file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
