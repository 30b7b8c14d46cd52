#!/usr/bin/env python3
"""check_layers.py - includes in src/ point down the layer order only.

The order is the Makefile's LAYERS line (lowest first). A file in
src/<layer>/ may include, with quotes:
  - "<lower or same layer>/name.h" (every project header is named with its
    folder, so a bare "name.h" is an error);
  - the BPF ABI (a header of bpf/ or a generated *.skel.h) only from
    collect/, the layer that loads the program;
  - generated nanopb headers (build/gen) only from formats/ and above;
  - generated field-number headers (build/gen/**.tags.h: #defines only,
    no nanopb code) from any layer.
An include of a higher layer, a missing header, or a file outside the layer
folders is reported with its line. Prints "layers: N passed, N failed"
(one check per layer) and exits 1 on any violation.
"""
import os
import re
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def layers():
    with open(os.path.join(ROOT, "Makefile")) as f:
        for line in f:
            m = re.match(r"^LAYERS\s*:=\s*(.+)$", line)
            if m:
                return m.group(1).split()
    sys.exit("check_layers: no LAYERS line in the Makefile")


def check(order):
    rank = {name: i for i, name in enumerate(order)}
    bpf = set(os.listdir(os.path.join(ROOT, "bpf")))
    errors = {name: [] for name in order}
    src = os.path.join(ROOT, "src")
    for entry in sorted(os.listdir(src)):
        if entry not in rank:
            errors.setdefault("src", []).append(
                f"src/{entry}: not in a layer folder (LAYERS: {' '.join(order)})")
    for layer in order:
        folder = os.path.join(src, layer)
        if not os.path.isdir(folder):
            continue
        for name in sorted(os.listdir(folder)):
            if not name.endswith((".c", ".h")):
                continue
            rel = f"src/{layer}/{name}"
            with open(os.path.join(folder, name), encoding="utf-8") as f:
                text = f.read()
            for m in INCLUDE.finditer(text):
                inc = m.group(1)
                line = text.count("\n", 0, m.start()) + 1
                where = f"{rel}:{line}: \"{inc}\""
                head = inc.split("/", 1)[0]
                if inc in bpf or inc.endswith(".skel.h"):
                    if layer != "collect":
                        errors[layer].append(f"{where}: the BPF ABI is collect/'s alone")
                elif inc.endswith(".tags.h"):
                    pass  # generated field numbers only: any layer may
                elif inc.endswith(".pb.h"):
                    if rank[layer] < rank["formats"]:
                        errors[layer].append(f"{where}: nanopb code below formats/")
                elif head in rank and "/" in inc:
                    if not os.path.isfile(os.path.join(src, inc)):
                        errors[layer].append(f"{where}: no such header")
                    elif rank[head] > rank[layer]:
                        errors[layer].append(
                            f"{where}: {layer}/ may not include {head}/ (a higher layer)")
                else:
                    errors[layer].append(f"{where}: name project headers as \"<layer>/name.h\"")
    return errors


def main():
    order = layers()
    errors = check(order)
    failed = 0
    for layer, errs in errors.items():
        for e in errs:
            print(e)
        failed += bool(errs)
    print(f"layers: {len(errors) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
