#!/usr/bin/env python3
"""No kernel is compiled into two translation units of one program.

    check_one_copy.py BINARY...

nvcc compiles a kernel into every translation unit that instantiates it, and each unit launches
its own copy (its launch stub is `static`). The host code around a launch is shared: the
`static` local that opts a kernel into more than 48 KB of shared memory runs once, for whichever
unit's copy called first. Where two units of one program hold the same kernel, the other copy is
then launched without the opt-in and fails with "invalid argument", or not, by the order of the
calls (chapters/meson.build: the GEMMs compiled once, and which chapters link which).

Reads each binary's machine code (`cuobjdump -sass`): one embedded ELF a translation unit and
target, each listing its kernels. Exit 77 (SKIP) without cuobjdump or without sm_90a machine code;
1 with one line per kernel found in two units of one binary.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_fences  # noqa: E402


def copies(sass):
    """{(arch, kernel): number of embedded ELFs holding it} of a `cuobjdump -sass` dump."""
    count, arch = {}, None
    for section in sass.split("Fatbin elf code:")[1:]:
        arch = None
        for line in section.splitlines():
            line = line.strip()
            if line.startswith("arch = "):
                arch = line.split("=", 1)[1].strip()
            elif line.startswith("Function : "):
                key = (arch, line.split(":", 1)[1].strip())
                count[key] = count.get(key, 0) + 1
    return count


def main():
    if len(sys.argv) < 2:
        print(__doc__.strip().splitlines()[2].strip())
        return 2
    if not check_fences.find_cuobjdump():
        print("SKIP: no cuobjdump (the CUDA toolkit's bin/) to read the machine code with")
        return 77
    faults, kernels, skipped = 0, 0, 0
    for binary in sys.argv[1:]:
        sass, status = check_fences.read_sass(binary)
        if sass is None:
            if status != 77:
                return status
            skipped += 1
            continue
        count = copies(sass)
        kernels += len(count)
        for (arch, kernel), n in sorted(count.items()):
            if n > 1:
                faults += 1
                print(f"FAIL {os.path.basename(binary)}: {kernel} ({arch}) in {n} translation units")
    if skipped == len(sys.argv) - 1:
        return 77
    print(f"{kernels} kernels in {len(sys.argv) - 1 - skipped} programs, {faults} in more than one "
          "translation unit")
    return 1 if faults else 0


if __name__ == "__main__":
    sys.exit(main())
