"""The worker's seccomp filter: its syscall tables against the kernel's headers, and the
program read back instruction by instruction as the kernel would run it."""

from __future__ import annotations

import errno
import re
import struct
from pathlib import Path

import pytest

from support.tools import missing
from witness_gate import seccomp

HEADERS = {
    "x86_64": Path("/usr/include/x86_64-linux-gnu/asm/unistd_64.h"),
    "aarch64": Path("/usr/include/asm-generic/unistd.h"),  # aarch64 uses the generic table
}


@pytest.mark.parametrize("machine", sorted(HEADERS))
def test_each_table_matches_the_kernels_numbers(machine: str):
    header = HEADERS[machine]
    if not header.is_file():
        missing(f"{header} (Debian's linux-libc-dev) is not installed")
    defined = {
        name: int(number) for name, number in re.findall(r"#define __NR(?:3264)?_(\w+)\s+(\d+)", header.read_text())
    }
    table = seccomp.syscall_numbers(machine)
    assert table is not None
    assert {name: defined.get(name) for name in table} == table
    # Every refused call the architecture has is in its table.
    assert [name for name in seccomp.REFUSED if name not in table] == [
        name for name in seccomp.REFUSED if name not in defined
    ]


def run(program: bytes, data: dict[int, int]) -> int:
    """Classic BPF over `struct seccomp_data`, for the instructions the filter uses."""
    instructions = [struct.unpack("=HBBI", program[at : at + 8]) for at in range(0, len(program), 8)]
    accumulator, pc = 0, 0
    while True:
        code, jt, jf, k = instructions[pc]
        if code == 0x20:
            accumulator = data[k]
        elif code == 0x06:
            return k
        else:
            taken = {0x15: accumulator == k, 0x35: accumulator >= k, 0x45: bool(accumulator & k)}[code]
            pc += jt if taken else jf
        pc += 1


@pytest.mark.parametrize("machine", ["x86_64", "aarch64"])
def test_the_program_refuses_what_it_lists_and_allows_the_rest(machine: str):
    program = seccomp.program(machine)
    numbers = seccomp.syscall_numbers(machine)
    assert program is not None and numbers is not None
    arch = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}[machine]
    refuse, allow = 0x50000 | errno.EPERM, 0x7FFF0000

    def verdict(number: int, flags: int = 0, on: int = arch) -> int:
        return run(program, {0: number, 4: on, 16: flags})

    for name in seccomp.REFUSED:
        if name in numbers:
            assert verdict(numbers[name]) == refuse, name
    for number in (0, 1, 2, 3, 39, 57, 59, 60, 231):  # read, write, open, close, getpid, fork, execve, exit...
        if number not in {numbers[name] for name in seccomp.REFUSED if name in numbers}:
            assert verdict(number) == allow, number
    assert verdict(numbers["clone"], 0x01200011) == allow  # fork's flags
    assert verdict(numbers["clone"], 0x10000000) == refuse  # CLONE_NEWUSER
    assert verdict(numbers["clone"], 0x00020000 | 0x01200011) == refuse  # CLONE_NEWNS
    assert verdict(numbers["clone3"]) == 0x50000 | errno.ENOSYS  # the C library falls back to clone
    assert verdict(numbers["socket"], 2) == allow and verdict(numbers["socket"], 1) == allow  # AF_INET, AF_UNIX
    assert verdict(numbers["socket"], seccomp.AF_VSOCK) == refuse
    assert verdict(0, on=0x40000003) == refuse  # another ABI (i386)
    if machine == "x86_64":
        assert verdict(0x40000000 | 1) == refuse  # x32


def test_a_machine_without_a_table_gets_no_filter():
    assert seccomp.program("sparc64") is None
