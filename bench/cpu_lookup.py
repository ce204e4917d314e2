#!/usr/bin/python3
"""CPU/node lookup and thread creation: patched glibc against a stock
one, side by side.  Usage: cpu_lookup.py OUTDIR [ROUNDS [TESTRUN LABEL]]

The stock program runs under the system glibc, or, given TESTRUN (a
glibc build tree's testrun.sh), under that glibc, named LABEL."""

import sys

from bench_driver import print_table, run_rows

out = sys.argv[1]
rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 7
patched = f"{out}/cpu-lookup-patched"
runner = sys.argv[3:4]
label = sys.argv[4] if len(sys.argv) > 4 else "glibc (the system's)"
stock = runner + [f"{out}/cpu-lookup-stock"]
off = {"GLIBC_TUNABLES": "glibc.pthread.rseq=0"}
N = "20000000"
NSYS = "2000000"
NTHR = "20000"

rows = [
    ("tls", "plain TLS load (baseline)", [patched, "tls-load", N], None),
    ("acc", "rseq_area_cpu() inline accessor (patched)",
     [patched, "accessor", N], None),
    ("sg_p", "sched_getcpu() patched", [patched, "sched_getcpu", N], None),
    ("sg_s", f"sched_getcpu() stock {label}", stock + ["sched_getcpu", N],
     None),
    ("sg_off", "sched_getcpu() patched, registration off (vDSO)",
     [patched, "sched_getcpu", N], off),
    ("sys", "getcpu system call", [patched, "getcpu-syscall", NSYS], None),
    ("gn_p", "getcpu(&cpu, &node) patched", [patched, "getcpu-node", N],
     None),
    ("an_p", "rseq_area_cpu() + rseq_area_node() inline (patched)",
     [patched, "accessor-node", N], None),
    ("gn_s", "getcpu(&cpu, &node) stock (vDSO)", stock + ["getcpu-node", N],
     None),
    ("th_p", "pthread_create+join patched", [patched, "thread-create", NTHR],
     None),
    ("th_s", "pthread_create+join stock", stock + ["thread-create", NTHR],
     None),
]
ratios = [
    ("accessor / TLS load", "acc", "tls", ("<=", 2.0)),
    ("sched_getcpu patched / stock", "sg_p", "sg_s", ("<=", 1.05)),
    ("getcpu+node stock / patched (speed-up)", "gn_s", "gn_p", (">=", 2.0)),
    ("getcpu+node stock / inline accessors (speed-up)", "gn_s", "an_p",
     (">=", 2.0)),
    ("thread create patched / stock", "th_p", "th_s", ("<=", 1.05)),
]
medians = run_rows(rows, rounds)
print_table(f"CPU lookup and thread creation (median of {rounds} rounds)",
            rows, medians, ratios)
