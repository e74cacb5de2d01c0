#!/usr/bin/env python3
"""Writes the seed corpus of fatbin_fuzz (tests/fuzz/corpus/fatbin/), as committed:
  - small hand-built ELFs with a .nv_fatbin / __nv_relfatbin section (the layout src/doctor/fatbin.cpp
    documents), so that the fuzzer starts from inputs of a few hundred bytes;
  - with nvcc (when found): tests/doctor/fatbin_sample.cu as a relocatable object and as an
    executable, for SASS, PTX and compressed entries as the toolkit writes them;
  - truncated copies (inside the header, the section headers and the fatbin).
Every seed stays under 64 KiB. Usage: tests/fuzz/make_fatbin_seeds.py [OUT_DIR]
"""
import os
import shutil
import struct
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "tests", "fuzz", "corpus", "fatbin")


def entry(kind, arch, payload, flags=0):
    hdr = struct.pack("<HHIQIIHHI", kind, 0x0101, 64, len(payload), 0, 0, 0, arch // 10, arch)
    hdr += b"\0" * (48 - len(hdr)) + struct.pack("<Q", flags) + b"\0" * 8
    return hdr + payload


def container(entries, magic=0xBA55ED50):
    body = b"".join(entries)
    return struct.pack("<IHHQ", magic, 1, 16, len(body)) + body


def elf(sections):
    """sections: [(name, type, data)] -> a 64-bit little-endian ELF with a section name table."""
    names = b"\0"
    offs = []
    for name, _, _ in sections + [(".shstrtab", 3, b"")]:
        offs.append(len(names))
        names += name.encode() + b"\0"
    blob = bytearray(64)
    placed = []
    for (name, typ, data), noff in zip(sections, offs):
        while len(blob) % 8:
            blob.append(0)
        placed.append((noff, typ, len(blob), len(data)))
        blob += data
    placed.append((offs[-1], 3, len(blob), len(names)))
    blob += names
    while len(blob) % 8:
        blob.append(0)
    shoff = len(blob)
    blob += b"\0" * 64  # section 0
    for noff, typ, off, size in placed:
        blob += struct.pack("<IIQQQQIIQQ", noff, typ, 0, 0, off, size, 0, 0, 8, 0)
    shnum = len(placed) + 1
    ident = b"\x7fELF" + bytes([2, 1, 1]) + b"\0" * 9
    blob[0:64] = ident + struct.pack("<HHIQQQIHHHHHH", 2, 62, 1, 0, 0, shoff, 0, 64, 0, 0, 64, shnum, shnum - 1)
    return bytes(blob)


def write(name, data):
    assert len(data) < 64 * 1024, name
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)


def main():
    os.makedirs(OUT, exist_ok=True)
    sass80 = entry(2, 80, b"\x7fELF" + b"\0" * 28)
    ptx90 = entry(1, 90, b".version 8.0\n.target sm_90\n")
    write("tiny-sm80-ptx90.elf", elf([(".text", 1, b"\xc3"), (".nv_fatbin", 1, container([sass80, ptx90]))]))
    write("tiny-relfatbin.o", elf([("__nv_relfatbin", 1, container([entry(2, 75, b"x" * 16)], 0x466243B1))]))
    write("tiny-two-containers.elf",
          elf([(".nv_fatbin", 1, container([sass80]) + b"\0" * 8 + container([entry(2, 86, b""), ptx90]))]))
    write("tiny-compressed.elf", elf([(".nv_fatbin", 1, container([entry(2, 90, b"z" * 8, flags=0x2000)]))]))
    write("tiny-no-fatbin.elf", elf([(".text", 1, b"\x90\xc3")]))
    write("tiny-nobits.elf", elf([(".nv_fatbin", 8, b"")]))
    write("not-elf.txt", b"#!/bin/sh\necho hello\n")
    write("elf32.elf", b"\x7fELF\x01\x01\x01" + b"\0" * 57)

    nvcc = shutil.which("nvcc") or ("/usr/local/cuda/bin/nvcc" if os.path.exists("/usr/local/cuda/bin/nvcc") else None)
    src = os.path.join(ROOT, "tests", "doctor", "fatbin_sample.cu")
    if nvcc:
        with tempfile.TemporaryDirectory() as tmp:
            builds = {
                "nvcc-rel-sm80-ptx90.o": ["-c", "-gencode", "arch=compute_80,code=sm_80",
                                          "-gencode", "arch=compute_90,code=compute_90"],
                "nvcc-exe-sm75-ptx86": ["-cudart", "shared", "-gencode", "arch=compute_75,code=sm_75",
                                        "-gencode", "arch=compute_86,code=compute_86"],
                "nvcc-exe-compressed-sm90": ["-cudart", "shared", "-Xfatbin", "-compress-all",
                                             "-gencode", "arch=compute_90,code=sm_90"],
            }
            for name, args in builds.items():
                out = os.path.join(tmp, name)
                subprocess.run([nvcc, *args, "-o", out, src], check=True)
                subprocess.run(["strip", "-o", out + ".s", out], check=True)
                with open(out + ".s", "rb") as f:
                    data = f.read()
                write(name, data)
                if name == "nvcc-exe-sm75-ptx86":
                    write(name + ".trunc-header", data[:40])
                    write(name + ".trunc-sections", data[: len(data) - 100])
                    write(name + ".trunc-half", data[: len(data) // 2])
    else:
        print("make_fatbin_seeds: nvcc not found; only the hand-built seeds were written", file=sys.stderr)
    write("tiny-trunc-container.elf", elf([(".nv_fatbin", 1, container([sass80, ptx90])[:-20])]))


if __name__ == "__main__":
    main()
