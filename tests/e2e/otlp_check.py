#!/usr/bin/python3
"""otlp_check.py - decode an OTLP Profiles file and check it for conformance.

Usage: otlp_check.py FILE [--schema ours|official|both] [--summary]
                     [--profcheck auto|required|off]

FILE holds one serialized ProfilesData (the same bytes as an
ExportProfilesServiceRequest). The file is decoded with Python modules that
protoc generates from either schema:
  ours      nanopb_protos/ (the project's own .proto files)
  official  <shared>/otlp-proto (upstream opentelemetry-proto)
into tests/e2e/gen/<schema>/, regenerated when the .proto files change. Both
define the same full names, so each schema is decoded in its own process;
with --schema both (the default) the two decodings must give the same result.
<shared> is ../shared beside the repository (as CI clones it), or beside
the main checkout when the repository is one of its git worktrees.

The file also goes through the official conformance checker, profcheck
(open-telemetry/sig-profiling), with its optional checks (-check-dupes,
-check-orphans): the binary $PROFCHECK, else <shared>/tools/profcheck/profcheck.
--profcheck auto (the default) runs it when it is there and notes when it is
not; required fails without it; off never runs it.

Each violated rule is printed to stderr as "FAIL: <rule>: <detail>"; the exit
status is 0 when every rule holds, 1 otherwise (2 for usage errors). With
--summary a JSON summary goes to stdout:

  {"resources": [{"attributes": {...resource attributes...},
                  "scope": {"name": ..., "version": ...},
                  "profile": {"sample_type": [type, unit], "period_type": [...],
                              "period": n, "time_unix_nano": n,
                              "duration_nano": n},
                  "samples": <number of Sample messages>,
                  "total": <sum of all values>,
                  "stacks": [{"functions": [name or "?", ...],
                              "types": [profile.frame.type or null, ...],
                              "mappings": [mapping filename or null, ...],
                              "value": n,
                              "attributes": {...sample attributes...}}]}]}

The three lists of a stack describe the same frames, leaf first (a location
with several lines, i.e. inlined calls, gives one frame per line; one with no
line gives "?"). Stack "value" is the sum of the sample's values (or its
number of timestamps when it has no values). Importable: check(path) -> (violations,
summary) decodes with "ours" in the calling process; check_message(msg) runs
the rules on an already decoded ProfilesData.
"""

import argparse
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
GEN = os.path.join(HERE, "gen")


def shared_dir():
    """The folder of shared tools and schemas: ../shared beside the
    repository, else beside the main checkout of a git worktree."""
    here = os.path.normpath(os.path.join(REPO, "..", "shared"))
    if os.path.isdir(here):
        return here
    try:
        r = subprocess.run(["git", "-C", REPO, "rev-parse", "--path-format=absolute",
                            "--git-common-dir"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return here
    main = os.path.dirname(r.stdout.strip()) if r.returncode == 0 and r.stdout.strip() else ""
    there = os.path.normpath(os.path.join(main, "..", "shared")) if main else ""
    return there if there and os.path.isdir(there) else here


SHARED = shared_dir()
SCHEMAS = {
    "ours": os.path.join(REPO, "nanopb_protos"),
    "official": os.path.join(SHARED, "otlp-proto"),
}
PROFCHECK_FLAGS = ["-check-dupes", "-check-orphans"]
PROFILES_MOD = "opentelemetry.proto.profiles.v1development.profiles_pb2"
MAX_PER_RULE = 20  # violations printed per rule; the rest are counted

_loaded = None  # (schema, module) imported into this process


# ---- schema generation ---------------------------------------------------


def _protos(src):
    """The schema's .proto files. Not nanopb_protos/google/: those are the few
    gRPC status fields profcap's C code decodes, and generated here they would
    shadow Python's own google.protobuf package."""
    out = []
    for root, _, files in os.walk(src):
        if os.path.relpath(root, src).split(os.sep)[0] == "google":
            continue
        for f in files:
            if f.endswith(".proto"):
                out.append(os.path.relpath(os.path.join(root, f), src))
    return sorted(out)


def _fingerprint(src, protos):
    h = hashlib.sha256()
    h.update(subprocess.run(["protoc", "--version"], capture_output=True, check=True).stdout)
    for rel in protos:
        h.update(rel.encode() + b"\0")
        with open(os.path.join(src, rel), "rb") as f:
            h.update(f.read() + b"\0")
    return h.hexdigest()


def generate(schema):
    """Make sure gen/<schema> holds Python modules for the schema's current
    .proto files; returns its path, or None when the schema is missing."""
    src = SCHEMAS[schema]
    if not os.path.isdir(src):
        return None
    protos = _protos(src)
    if not protos:
        return None
    out = os.path.join(GEN, schema)
    stamp = os.path.join(out, ".stamp")
    fp = _fingerprint(src, protos)
    os.makedirs(GEN, exist_ok=True)
    with open(os.path.join(GEN, ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            with open(stamp) as f:
                if f.read().strip() == fp:
                    return out
        except OSError:
            pass
        tmp = tempfile.mkdtemp(prefix=schema + ".", dir=GEN)
        os.chmod(tmp, 0o755)
        try:
            subprocess.run(["protoc", "-I", src, "--python_out=" + tmp] + protos,
                           check=True, capture_output=True, text=True)
            # Regular packages, so that an installed "opentelemetry" package
            # cannot shadow the generated modules.
            for root, _, _ in os.walk(tmp):
                open(os.path.join(root, "__init__.py"), "a").close()
            with open(os.path.join(tmp, ".stamp"), "w") as f:
                f.write(fp + "\n")
            shutil.rmtree(out, ignore_errors=True)
            os.rename(tmp, out)
        except subprocess.CalledProcessError as e:
            shutil.rmtree(tmp, ignore_errors=True)
            raise RuntimeError("protoc failed for %s schema: %s" % (schema, e.stderr.strip()))
    return out


def load_schema(schema="ours"):
    """Import the generated profiles module of @schema into this process
    (only one schema per process) and return it."""
    global _loaded
    if _loaded:
        if _loaded[0] != schema:
            raise RuntimeError("schema %s already loaded in this process" % _loaded[0])
        return _loaded[1]
    path = generate(schema)
    if path is None:
        raise RuntimeError("schema %s not found at %s" % (schema, SCHEMAS[schema]))
    sys.path.insert(0, path)
    import importlib

    mod = importlib.import_module(PROFILES_MOD)
    _loaded = (schema, mod)
    return mod


# ---- rules ---------------------------------------------------------------


class Violations:
    def __init__(self):
        self.items = []

    def add(self, rule, detail):
        self.items.append((rule, detail))

    def lines(self):
        out, seen = [], {}
        for rule, detail in self.items:
            seen[rule] = seen.get(rule, 0) + 1
            if seen[rule] <= MAX_PER_RULE:
                out.append("FAIL: %s: %s" % (rule, detail))
        for rule, n in seen.items():
            if n > MAX_PER_RULE:
                out.append("FAIL: %s: ... and %d more" % (rule, n - MAX_PER_RULE))
        return out


def _anyvalue_py(v, strings):
    kind = v.WhichOneof("value")
    if kind is None:
        return None
    if kind == "string_value_strindex":
        i = v.string_value_strindex
        return strings[i] if 0 <= i < len(strings) else None
    if kind == "bytes_value":
        return v.bytes_value.hex()
    if kind == "array_value":
        return [_anyvalue_py(x, strings) for x in v.array_value.values]
    if kind == "kvlist_value":
        return {_kv_key(kv, strings): _anyvalue_py(kv.value, strings)
                for kv in v.kvlist_value.values}
    return getattr(v, kind)


def _kv_key(kv, strings):
    if kv.key or not kv.key_strindex:
        return kv.key
    i = kv.key_strindex
    return strings[i] if 0 <= i < len(strings) else None


TABLES = ("mapping_table", "location_table", "function_table", "link_table",
          "string_table", "attribute_table", "stack_table")


def check_message(msg):
    """Run every rule on ProfilesData @msg; returns (violations, summary)
    where violations is a list of "FAIL: rule: detail" lines."""
    v = Violations()
    d = msg.dictionary
    strings = list(d.string_table)
    n = {t: len(getattr(d, t)) for t in TABLES}

    # 1. every table present with its zero value at index 0
    for t in TABLES:
        tbl = getattr(d, t)
        if not len(tbl):
            v.add("zero-value", "%s is empty (index 0 must hold the zero value)" % t)
        elif t == "string_table":
            if tbl[0] != "":
                v.add("zero-value", "string_table[0] is %r, not \"\"" % tbl[0])
        elif tbl[0].ByteSize():
            # link_table[0] too: exactly Link{}, empty ids (not 16 + 8 zero bytes).
            v.add("zero-value", "%s[0] is not the zero value: %s" % (t, str(tbl[0]).strip()))

    # 2. indices in range; also collect references for rule 9
    refs = {t: set() for t in TABLES}

    def idx(what, i, table, counts=True):
        # Index 0 means "not set"; a missing zero entry is rule 1's business.
        # @counts: whether the reference keeps the entry from being an orphan
        # (rule 9); profcheck counts none from AnyValue/KeyValue string indices.
        if i and (i < 0 or i >= n[table]):
            v.add("index-range", "%s = %d outside %s (size %d)" % (what, i, table, n[table]))
            return False
        if counts:
            refs[table].add(i)
        return True

    def anyvalue_refs(what, val):
        kind = val.WhichOneof("value")
        if kind == "string_value_strindex":
            idx(what + ".string_value_strindex", val.string_value_strindex, "string_table",
                counts=False)
        elif kind == "array_value":
            for j, x in enumerate(val.array_value.values):
                anyvalue_refs("%s.array_value[%d]" % (what, j), x)
        elif kind == "kvlist_value":
            for j, kv in enumerate(val.kvlist_value.values):
                keyvalue_refs("%s.kvlist_value[%d]" % (what, j), kv)

    def keyvalue_refs(what, kv):
        if kv.key_strindex:
            idx(what + ".key_strindex", kv.key_strindex, "string_table", counts=False)
        anyvalue_refs(what + ".value", kv.value)

    def attr_list(what, indices):
        # 3. unique keys within one attribute_indices list
        keys = {}
        for i in indices:
            if not idx(what + ".attribute_indices", i, "attribute_table"):
                continue
            k = d.attribute_table[i].key_strindex
            key = strings[k] if 0 <= k < len(strings) else k
            if key in keys:
                v.add("attr-key-unique", "%s repeats key %r (attributes %d and %d)"
                      % (what, key, keys[key], i))
            keys[key] = i

    for i, m in enumerate(d.mapping_table):
        w = "mapping_table[%d]" % i
        idx(w + ".filename_strindex", m.filename_strindex, "string_table")
        attr_list(w, m.attribute_indices)
        # 6. address range: both zero (unknown) or start < limit
        if i and m.memory_start >= m.memory_limit and (m.memory_start or m.memory_limit):
            v.add("mapping-range", "%s: memory_start %#x >= memory_limit %#x"
                  % (w, m.memory_start, m.memory_limit))
    for i, loc in enumerate(d.location_table):
        w = "location_table[%d]" % i
        ok = idx(w + ".mapping_index", loc.mapping_index, "mapping_table")
        for j, line in enumerate(loc.lines):
            idx("%s.lines[%d].function_index" % (w, j), line.function_index, "function_table")
            # 12. line and column are not negative
            for fld in ("line", "column"):
                if getattr(line, fld) < 0:
                    v.add("non-negative", "%s.lines[%d].%s = %d" % (w, j, fld, getattr(line, fld)))
        attr_list(w, loc.attribute_indices)
        # 10. address inside the mapping (one with a range)
        if ok and loc.mapping_index:
            m = d.mapping_table[loc.mapping_index]
            if (m.memory_start or m.memory_limit) and \
                    not m.memory_start <= loc.address <= m.memory_limit:
                v.add("location-address", "%s: address %#x outside mapping %d [%#x, %#x]"
                      % (w, loc.address, loc.mapping_index, m.memory_start, m.memory_limit))
    for i, f in enumerate(d.function_table):
        w = "function_table[%d]" % i
        idx(w + ".name_strindex", f.name_strindex, "string_table")
        idx(w + ".system_name_strindex", f.system_name_strindex, "string_table")
        idx(w + ".filename_strindex", f.filename_strindex, "string_table")
        if f.start_line < 0:
            v.add("non-negative", "%s.start_line = %d" % (w, f.start_line))
        # 10. a function has some name
        if i and not (f.name_strindex or f.system_name_strindex or f.filename_strindex):
            v.add("function-name", "%s has none of name, system_name, filename" % w)
    # 13. links after the zero one carry ids of full width
    for i, lk in enumerate(d.link_table):
        if i and (len(lk.trace_id) != 16 or len(lk.span_id) != 8):
            v.add("link-id-width", "link_table[%d]: trace_id %d bytes (want 16), span_id %d "
                  "bytes (want 8)" % (i, len(lk.trace_id), len(lk.span_id)))
    for i, a in enumerate(d.attribute_table):
        w = "attribute_table[%d]" % i
        idx(w + ".key_strindex", a.key_strindex, "string_table")
        idx(w + ".unit_strindex", a.unit_strindex, "string_table")
        anyvalue_refs(w + ".value", a.value)
    nloc, loc_refs = n["location_table"], refs["location_table"]
    for i, st in enumerate(d.stack_table):
        locs = st.location_indices
        loc_refs.update(locs)
        for j, li in enumerate(locs):
            if not 0 <= li < nloc:
                idx("stack_table[%d].location_indices[%d]" % (i, j), li, "location_table")

    def s(i):
        return strings[i] if 0 <= i < len(strings) else None

    # Summary helpers, computed once per table entry.
    attr_kv = [(s(a.key_strindex), _anyvalue_py(a.value, strings)) for a in d.attribute_table]

    def attrs_of(indices):
        return dict(attr_kv[i] for i in indices if 0 <= i < len(attr_kv))

    fn_names = [s(f.name_strindex) or s(f.system_name_strindex) or "?"
                for f in d.function_table]
    map_names = [s(m.filename_strindex) for m in d.mapping_table]
    loc_frames = []  # per location: [(function, type, mapping)], leaf first
    for loc in d.location_table:
        ftype = attrs_of(loc.attribute_indices).get("profile.frame.type")
        mapping = None
        if loc.mapping_index and 0 <= loc.mapping_index < len(map_names):
            mapping = map_names[loc.mapping_index]
        names = [fn_names[ln.function_index]
                 if 0 < ln.function_index < len(fn_names) else "?" for ln in loc.lines]
        loc_frames.append([(name, ftype, mapping) for name in names or ["?"]])
    stack_cache = {}

    def stack_of(stack_index):
        out = stack_cache.get(stack_index)
        if out is None:
            frames = []
            if 0 <= stack_index < n["stack_table"]:
                for li in d.stack_table[stack_index].location_indices:
                    if 0 <= li < len(loc_frames):
                        frames.extend(loc_frames[li])
            out = ([f[0] for f in frames], [f[1] for f in frames], [f[2] for f in frames])
            stack_cache[stack_index] = out
        return out

    summary = {"resources": []}
    ids_seen = {}  # profile_id -> where first seen
    # 14. structure: some resource, each with a scope, each with a profile
    if not len(msg.resource_profiles):
        v.add("structure", "resource_profiles is empty")
    for ri, rp in enumerate(msg.resource_profiles):
        if not len(rp.scope_profiles):
            v.add("structure", "resource_profiles[%d] has no scope_profiles" % ri)
        for si, sp in enumerate(rp.scope_profiles):
            if not len(sp.profiles):
                v.add("structure", "resource_profiles[%d].scope_profiles[%d] has no profiles"
                      % (ri, si))
    for ri, rp in enumerate(msg.resource_profiles):
        rw = "resource_profiles[%d]" % ri
        rattrs, seen = {}, set()
        for j, kv in enumerate(rp.resource.attributes):
            keyvalue_refs("%s.resource.attributes[%d]" % (rw, j), kv)
            key = _kv_key(kv, strings)
            if key in seen:
                v.add("attr-key-unique", "%s.resource repeats key %r" % (rw, key))
            seen.add(key)
            rattrs[key] = _anyvalue_py(kv.value, strings)
        res = {"attributes": rattrs, "scope": None, "profile": None,
               "samples": 0, "total": 0, "stacks": []}
        for si, sp in enumerate(rp.scope_profiles):
            if res["scope"] is None:
                res["scope"] = {"name": sp.scope.name, "version": sp.scope.version}
            for j, kv in enumerate(sp.scope.attributes):
                keyvalue_refs("%s.scope_profiles[%d].scope.attributes[%d]" % (rw, si, j), kv)
            for pi, prof in enumerate(sp.profiles):
                pw = "%s.scope_profiles[%d].profiles[%d]" % (rw, si, pi)
                for vt in ("sample_type", "period_type"):
                    t = getattr(prof, vt)
                    idx("%s.%s.type_strindex" % (pw, vt), t.type_strindex, "string_table")
                    idx("%s.%s.unit_strindex" % (pw, vt), t.unit_strindex, "string_table")
                attr_list(pw, prof.attribute_indices)
                # 11. id and duration
                if len(prof.profile_id) != 16 or not any(prof.profile_id):
                    v.add("profile-id", "%s: profile_id %r is not 16 bytes, not all zero"
                          % (pw, prof.profile_id.hex()))
                elif prof.profile_id in ids_seen:
                    v.add("profile-id", "%s: profile_id %s is also %s's (each Profile has "
                          "its own)" % (pw, prof.profile_id.hex(), ids_seen[prof.profile_id]))
                else:
                    ids_seen[prof.profile_id] = pw
                if prof.duration_nano <= 0:
                    v.add("duration", "%s: duration_nano is 0" % pw)
                if res["profile"] is None:
                    res["profile"] = {
                        "sample_type": [s(prof.sample_type.type_strindex),
                                        s(prof.sample_type.unit_strindex)],
                        "period_type": [s(prof.period_type.type_strindex),
                                        s(prof.period_type.unit_strindex)],
                        "period": prof.period,
                        "time_unix_nano": prof.time_unix_nano,
                        "duration_nano": prof.duration_nano,
                    }
                lo, hi = prof.time_unix_nano, prof.time_unix_nano + prof.duration_nano
                shapes = set()
                for k, smp in enumerate(prof.samples):
                    sw = "%s.samples[%d]" % (pw, k)
                    idx(sw + ".stack_index", smp.stack_index, "stack_table")
                    idx(sw + ".link_index", smp.link_index, "link_table")
                    attr_list(sw, smp.attribute_indices)
                    nv, nt = len(smp.values), len(smp.timestamps_unix_nano)
                    # 4. values match the sample type / timestamps
                    if not nt and nv != 1:
                        v.add("sample-values", "%s: %d values without timestamps (want 1)"
                              % (sw, nv))
                    elif nt and nv not in (0, nt):
                        v.add("sample-values", "%s: %d values for %d timestamps" % (sw, nv, nt))
                    shapes.add("values" if not nt else "timestamps" if not nv else "both")
                    # 7. timestamps inside the profile's window
                    for ts in smp.timestamps_unix_nano:
                        if not lo <= ts < hi:
                            v.add("timestamp-range", "%s: timestamp %d outside [%d, %d)"
                                  % (sw, ts, lo, hi))
                    value = sum(smp.values) if nv else nt
                    res["samples"] += 1
                    res["total"] += value
                    functions, types, mappings = stack_of(smp.stack_index)
                    res["stacks"].append({"functions": functions, "types": types,
                                          "mappings": mappings, "value": value,
                                          "attributes": attrs_of(smp.attribute_indices)})
                # 5. one shape per profile
                if len(shapes) > 1:
                    v.add("sample-shape", "%s mixes sample shapes %s" % (pw, sorted(shapes)))
        # 11. a resource with samples names its process
        if res["samples"] and not isinstance(rattrs.get("process.pid"), int):
            v.add("process-pid", "%s holds samples but no int process.pid" % rw)
        summary["resources"].append(res)

    # 8. no duplicates within a table (mappings compared as profcheck does:
    # filename, sorted attributes, range and offset)
    for t in TABLES:
        first = {}
        for i, e in enumerate(getattr(d, t)):
            if t == "string_table":
                key = e
            elif t == "mapping_table":
                key = (e.filename_strindex, tuple(sorted(e.attribute_indices)), e.memory_start,
                       e.memory_limit, e.file_offset)
            else:
                key = e.SerializeToString(deterministic=True)
            if key in first:
                v.add("duplicate", "%s[%d] equals %s[%d]" % (t, i, t, first[key]))
            else:
                first[key] = i

    # 9. no orphans (index 0 is the zero value and exempt)
    for t in TABLES:
        for i in range(1, n[t]):
            if i not in refs[t]:
                what = repr(strings[i]) if t == "string_table" else ""
                v.add("orphan", "%s[%d] %sis not referenced" % (t, i, what + " " if what else ""))

    return v.lines(), summary


def check(path, schema="ours"):
    """Decode @path with @schema (imported into this process) and check it.
    Returns (violations, summary); a file that does not decode gives one
    violation and summary None."""
    mod = load_schema(schema)
    try:
        with open(path, "rb") as f:
            data = f.read()
        msg = mod.ProfilesData.FromString(data)
    except Exception as e:  # decode errors come in several types
        return ["FAIL: decode: %s: %s" % (path, e)], None
    return check_message(msg)


# ---- the official checker ------------------------------------------------


def find_profcheck():
    """(path, None) of the profcheck binary to run, or (None, why not)."""
    env = os.environ.get("PROFCHECK", "")
    if env:
        if os.access(env, os.X_OK) and os.path.isfile(env):
            return env, None
        return None, "PROFCHECK=%s is not an executable file" % env
    path = os.path.join(SHARED, "tools", "profcheck", "profcheck")
    if os.access(path, os.X_OK):
        return path, None
    return None, ("no profcheck: PROFCHECK is not set and %s is missing "
                  "(clone the shared folder beside the repository)" % path)


def run_profcheck(path, exe=None):
    """Run profcheck with its optional checks on @path: (passed, output).
    @exe: the binary (find_profcheck()'s when None; it must be there)."""
    exe = exe or find_profcheck()[0]
    r = subprocess.run([exe] + PROFCHECK_FLAGS + [path], capture_output=True, text=True,
                       timeout=120)
    return r.returncode == 0 and "conformance checks passed" in r.stdout, r.stdout + r.stderr


def _profcheck_violations(path, mode):
    """profcheck's findings on @path as violation lines (mode auto/required)."""
    exe, why = find_profcheck()
    if exe is None:
        if mode == "required":
            return ["FAIL: profcheck: %s" % why]
        print("note: %s; not run" % why, file=sys.stderr)
        return []
    ok, out = run_profcheck(path, exe)
    if ok:
        return []
    lines = [ln.strip() for ln in out.splitlines() if ln.strip()]
    return ["FAIL: profcheck: %s" % ln for ln in lines] or ["FAIL: profcheck: failed, no output"]


# ---- command line --------------------------------------------------------


def _digest(summary):
    return hashlib.sha256(json.dumps(summary, sort_keys=True).encode()).hexdigest()


def _run_child(path, schema, want_summary):
    """Check @path with @schema in a child process: (violations, digest of
    the summary or None when undecodable, summary if @want_summary)."""
    cmd = [sys.executable, os.path.abspath(__file__), path, "--schema", schema, "--internal-json"]
    r = subprocess.run(cmd + (["--summary"] if want_summary else []),
                       capture_output=True, text=True)
    if r.returncode not in (0, 1) or not r.stdout:
        return ["FAIL: %s-schema: checker crashed: %s" % (schema, r.stderr.strip())], None, None
    out = json.loads(r.stdout)
    return out["violations"], out["digest"], out.get("summary")


def main(argv=None):
    ap = argparse.ArgumentParser(description="Check an OTLP Profiles file.")
    ap.add_argument("file")
    ap.add_argument("--schema", choices=("ours", "official", "both"), default="both")
    ap.add_argument("--summary", action="store_true", help="print a JSON summary to stdout")
    ap.add_argument("--profcheck", choices=("auto", "required", "off"), default="auto",
                    help="run the official checker too (auto: when it is there)")
    ap.add_argument("--internal-json", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)

    try:
        if args.internal_json:
            violations, summary = check(args.file, args.schema)
            out = {"violations": violations, "digest": summary and _digest(summary)}
            if args.summary:
                out["summary"] = summary
            json.dump(out, sys.stdout)
            return 1 if violations else 0

        schemas = ["ours", "official"] if args.schema == "both" else [args.schema]
        if "official" in schemas and generate("official") is None:
            if args.schema == "official":
                print("FAIL: official-schema: not found at %s" % SCHEMAS["official"],
                      file=sys.stderr)
                return 1
            print("note: official schema not found at %s; checking with ours only"
                  % SCHEMAS["official"], file=sys.stderr)
            schemas = ["ours"]
        results = {sc: _run_child(args.file, sc, args.summary and sc == schemas[0])
                   for sc in schemas}
    except RuntimeError as e:
        print("FAIL: setup: %s" % e, file=sys.stderr)
        return 1

    violations, digest, summary = results[schemas[0]]
    if len(schemas) == 2:
        for line in results["official"][0]:
            if line not in violations:
                violations.append(line.replace("FAIL: ", "FAIL: official: ", 1))
        if results["official"][1] != digest:
            violations.append("FAIL: schemas-agree: ours and official schema decode differently")
    ran_profcheck = False
    if args.profcheck != "off":
        violations += _profcheck_violations(args.file, args.profcheck)
        ran_profcheck = find_profcheck()[0] is not None
    for line in violations:
        print(line, file=sys.stderr)
    if args.summary and summary is not None:
        json.dump(summary, sys.stdout, indent=1, sort_keys=True)
        sys.stdout.write("\n")
    if not violations:
        print("otlp_check: OK (%s schema%s%s)" % ("+".join(schemas), "s" if len(schemas) > 1 else "",
                                                  ", profcheck" if ran_profcheck else ""),
              file=sys.stderr)
    return 1 if violations else 0


if __name__ == "__main__":
    sys.exit(main())
