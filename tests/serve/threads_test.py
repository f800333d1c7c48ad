"""hearth-serve's --threads default: one llama.cpp thread per physical core
this process may run on (the start line says how many), as the kernel's
topology counts them; a CPU affinity of one CPU gives one thread; an
explicit --threads wins; --help says so."""

import os
import re
import subprocess
import sys

from serve_harness import KEYS, Checks, Server, server_binary

checks = Checks("serve/threads")
check = checks.check


def threads_of(server):
    m = re.search(r"(\d+) llama\.cpp threads", server.banner)
    return int(m.group(1)) if m else None


def sysfs_cores(cpus):
    """Distinct core sibling sets of `cpus`, or None when sysfs lacks them."""
    cores = set()
    for cpu in cpus:
        topology = "/sys/devices/system/cpu/cpu%d/topology/" % cpu
        for name in ("core_cpus_list", "thread_siblings_list"):
            try:
                with open(topology + name) as f:
                    cores.add(f.read().strip())
                break
            except OSError:
                continue
        else:
            return None
    return len(cores)


def main():
    binary = server_binary()
    allowed = sorted(os.sched_getaffinity(0))
    with Server(binary, "--threads=0") as s:
        n = threads_of(s)
        expected = sysfs_cores(allowed)
        check(n is not None and 1 <= n <= len(allowed),
              "the default is between 1 and the %d allowed CPUs (%s)" % (len(allowed), n))
        if expected is not None:
            check(n == expected, "the default is the %d physical cores sysfs shows (%s)" %
                  (expected, n))
        st, _, out = s.request("POST", "/v1/completions",
                               {"model": "tiny", "prompt": "x", "max_tokens": 2}, key=KEYS["ana"])
        check(st == 200 and out["usage"]["completion_tokens"] == 2, "it serves")
    os.sched_setaffinity(0, {allowed[0]})
    try:
        with Server(binary, "--threads=0") as s:
            check(threads_of(s) == 1, "with one allowed CPU the default is 1 (%s)" % threads_of(s))
    finally:
        os.sched_setaffinity(0, set(allowed))
    with Server(binary, "--threads=3") as s:
        check(threads_of(s) == 3, "an explicit --threads wins")
    out = subprocess.run([binary, "--help"], stdout=subprocess.PIPE, text=True, timeout=60)
    check("physical core" in out.stdout, "--help says the default is the physical cores")
    bad = subprocess.run([binary, "--port=0", "--threads=-2"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, timeout=120)
    check(bad.returncode != 0 and "n_threads" in bad.stderr, "a negative --threads is refused")
    return checks.finish()


if __name__ == "__main__":
    sys.exit(main())
