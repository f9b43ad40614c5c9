"""hsw2v.system.memory: sizes as users write them, the machine's and the cgroups' memory
read from files laid out as Linux lays them out, and memory handed back to the OS,
seen in the process's own /proc maps."""
from __future__ import annotations

import os
import platform
import subprocess
import sys
import textwrap

import pytest

import hsw2v.system.memory as memory
from hsw2v.errors import HSW2VError

from tests.helpers import REPO
from tests.model.test_reading import fake_meminfo

UNITS = {"": 0, "K": 1, "M": 2, "G": 3, "T": 4}
LINUX = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux's /proc")
GLIBC = pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="glibc's malloc")


def test_available_memory_reads_memavailable(monkeypatch):
    fake_meminfo(monkeypatch, "MemTotal:       8000 kB\nMemFree:         700 kB\n"
                              "MemAvailable:    1500 kB\nBuffers:          30 kB\n")
    assert memory.available_memory() == 1500 * 1024


@pytest.mark.parametrize("unit", list(UNITS))
@pytest.mark.parametrize("spelling", ["{n}{u}", "{n}{u}B", "{n}{u}iB", " {n}{u} ", "{n}{l}"])
def test_sizes_in_binary_units(unit, spelling):
    """A number with K, M, G or T, any case, with B or iB or neither: that many times
    1024 to the unit's power, in whole bytes; below 1M, refused naming the option."""
    for number in ("1", "1.5", "200", "4096", "0.25"):
        text = spelling.format(n=number, u=unit, l=unit.lower())
        want = int(float(number) * 1024 ** UNITS[unit])
        if want >= 1 << 20:
            assert memory.parse_size(text, "count_memory") == want, text
        else:
            with pytest.raises(HSW2VError, match=r"^count_memory must be a size, at least 1M"):
                memory.parse_size(text, "count_memory")
        assert memory.parse_size(text, "x", least=0) == want, text


def test_what_is_not_a_size_is_refused():
    assert memory.parse_size(None, "count_memory") is None
    for text in ("", "M", "abc", "-1G", "1X", "2 GB extra", "nan", "inf", "4000000T"):
        with pytest.raises(HSW2VError) as e:
            memory.parse_size(text, "count_memory", least=0)
        assert str(e.value) == f"count_memory must be a size, such as 200M or 4G; got {text!r}"
    assert memory.parse_size("0", "HSW2V_CACHE_SIZE", least=0) == 0


def machine(tmp_path, monkeypatch, files: dict[str, str]) -> None:
    """Make the memory module read ``files`` (absolute paths under /proc and /sys) from
    ``tmp_path``; any other file under /proc or /sys is missing."""
    real_open = open

    def fake_open(path, *args, **kwargs):
        if str(path).startswith(("/proc/", "/sys/")):
            return real_open(tmp_path / str(path).lstrip("/"), *args, **kwargs)
        return real_open(path, *args, **kwargs)

    for path, text in files.items():
        where = tmp_path / path.lstrip("/")
        where.parent.mkdir(parents=True, exist_ok=True)
        where.write_text(text)
    monkeypatch.setattr(memory, "open", fake_open, raising=False)


GIB, MIB = 1 << 30, 1 << 20


@LINUX
@pytest.mark.parametrize("layout", ["v2", "v1", "unlimited", "no cgroup"])
def test_the_tightest_cgroup_limit_bounds_memory(tmp_path, monkeypatch, layout):
    """cgroup v2 and v1: the smallest limit of the process's cgroup and its ancestors
    ("max" and v1's near-2^63 are none), and what the limit leaves after the own
    cgroup's usage where that is less than MemAvailable; physical memory (the real
    MemTotal) where it is less than the limit."""
    with open("/proc/meminfo") as f:
        physical = next(int(line.split()[1]) * 1024 for line in f if line.startswith("MemTotal:"))
    files = {"/proc/meminfo": f"MemTotal: 99999999 kB\nMemAvailable: {8 * GIB // 1024} kB\n"}
    if layout == "v2":
        files |= {"/proc/self/cgroup": "0::/user.slice/app.scope\n",
                  "/sys/fs/cgroup/user.slice/app.scope/memory.max": "max\n",
                  "/sys/fs/cgroup/user.slice/app.scope/memory.current": f"{GIB}\n",
                  "/sys/fs/cgroup/user.slice/memory.max": f"{3 * GIB}\n",
                  "/sys/fs/cgroup/user.slice/memory.current": f"{2 * GIB + 5}\n",
                  "/sys/fs/cgroup/memory.max": f"{5 * GIB}\n"}
        limit, available = 3 * GIB, 2 * GIB
    elif layout == "v1":
        files |= {"/proc/self/cgroup": "7:cpu,cpuacct:/docker/abc\n5:memory:/docker/abc\n",
                  "/sys/fs/cgroup/memory/docker/abc/memory.limit_in_bytes": f"{(1 << 63) - 4096}\n",
                  "/sys/fs/cgroup/memory/docker/abc/memory.usage_in_bytes": f"{100 * MIB}\n",
                  "/sys/fs/cgroup/memory/docker/memory.limit_in_bytes": f"{512 * MIB}\n",
                  "/sys/fs/cgroup/cpu,cpuacct/docker/abc/memory.limit_in_bytes": f"{MIB}\n"}
        limit, available = 512 * MIB, 412 * MIB
    elif layout == "unlimited":
        files |= {"/proc/self/cgroup": "0::/a\n", "/sys/fs/cgroup/a/memory.max": "max\n",
                  "/sys/fs/cgroup/memory.max": "max\n"}
        limit, available = None, 8 * GIB
    else:
        limit, available = None, 8 * GIB
    machine(tmp_path, monkeypatch, files)
    assert memory.memory_limit() == limit
    assert memory.total_memory() == (physical if limit is None else min(physical, limit))
    assert memory.available_memory() == available


PAGES = '''
import numpy as np
from numba import njit
from hsw2v.system import memory


def llvm_rss():
    """Resident kB of libllvmlite's code pages, from /proc/self/smaps."""
    total, code = 0, False
    with open("/proc/self/smaps") as f:
        for line in f:
            head = line.split()
            if not head[0].endswith(":"):
                code = "libllvmlite" in line and head[1] == "r-xp"
            elif head[0] == "Rss:" and code:
                total += int(head[1])
    return total


@njit
def f(x):
    return x + 1


f(1)
before = llvm_rss()
memory.release_compiler_pages()
after = llvm_rss()


@njit
def g(x):
    return x * 3


print(before, after, g(5), llvm_rss())
'''


@LINUX
def test_released_compiler_pages_leave_the_resident_set_and_come_back():
    """After a compile, LLVM's code pages are resident; released, they are not; numba
    compiles again all the same (the pages read back in)."""
    done = subprocess.run([sys.executable, "-c", PAGES], capture_output=True, text=True,
                          timeout=300, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.returncode == 0, done.stderr[-2000:]
    before, after, result, again = (int(x) for x in done.stdout.split())
    assert before > 1000 and after < before // 20
    assert result == 15 and again > after


MAPPED = textwrap.dedent('''
    import sys
    import numpy as np
    from hsw2v.system import memory

    if sys.argv[1] == "map":
        memory.map_large_allocations()


    def mapping(address):
        with open("/proc/self/maps") as f:
            for line in f:
                lo, hi = (int(x, 16) for x in line.split()[0].split("-"))
                if lo <= address < hi:
                    return "heap" if "[heap]" in line else "own"
        return "gone"


    big = np.ones(8 << 20, np.uint8)
    del big  # (glibc then raises its threshold past 8 MiB)
    a = np.ones(2 << 20, np.uint8)
    address = a.ctypes.data
    held = mapping(address)
    del a
    small = np.ones(1 << 20, np.uint8)
    print(held, mapping(address), mapping(small.ctypes.data))
''')


@LINUX
@GLIBC
def test_large_allocations_go_back_to_the_os_when_freed():
    """With ``map_large_allocations``, 2 MiB has pages of its own, unmapped once freed,
    even after an 8 MiB free (which, by default, makes glibc serve it from the heap,
    where it stays); 1 MiB still comes from the heap."""
    env = {k: v for k, v in os.environ.items()  # glibc's defaults: none of the
           if not k.startswith("MALLOC_") and k != "GLIBC_TUNABLES"}  # environment's tuning
    env["PYTHONPATH"] = str(REPO)

    def run(how: str) -> list[str]:
        done = subprocess.run([sys.executable, "-c", MAPPED, how], capture_output=True,
                              text=True, timeout=300, env=env)
        assert done.returncode == 0, done.stderr[-2000:]
        return done.stdout.split()

    assert run("default")[:2] == ["heap", "heap"]
    assert run("map") == ["own", "gone", "heap"]
