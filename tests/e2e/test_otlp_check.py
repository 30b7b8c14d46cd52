#!/usr/bin/python3
"""Self-test of otlp_check.py: a valid ProfilesData passes, and a copy broken
in one way per rule is caught by exactly that rule.

Run: /usr/bin/python3 tests/e2e/test_otlp_check.py
"""

import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import otlp_check  # noqa: E402

pb = otlp_check.load_schema("ours")

T0 = 1700000000 * 10**9


def valid():
    """A small, fully conformant ProfilesData."""
    m = pb.ProfilesData()
    d = m.dictionary
    d.string_table.extend(["", "samples", "count", "cpu", "nanoseconds", "/usr/lib/libc.so.6",
                           "memcpy", "main", "profile.frame.type", "thread.id", "/usr/bin/app"])
    d.mapping_table.add()
    d.mapping_table.add(memory_start=0x1000, memory_limit=0x2000, filename_strindex=5)
    d.mapping_table.add(memory_start=0x400000, memory_limit=0x500000, filename_strindex=10)
    d.function_table.add()
    d.function_table.add(name_strindex=6, system_name_strindex=6)
    d.function_table.add(name_strindex=7)
    d.attribute_table.add()
    a = d.attribute_table.add(key_strindex=8)
    a.value.string_value = "native"
    a = d.attribute_table.add(key_strindex=9)
    a.value.int_value = 42
    d.location_table.add()
    loc = d.location_table.add(mapping_index=1, address=0x1234, attribute_indices=[1])
    loc.lines.add(function_index=1)
    loc = d.location_table.add(mapping_index=2, address=0x401000, attribute_indices=[1])
    loc.lines.add(function_index=2)
    d.stack_table.add()
    d.stack_table.add(location_indices=[1, 2])
    d.link_table.add()  # exactly Link{}

    rp = m.resource_profiles.add()
    kv = rp.resource.attributes.add(key="process.pid")
    kv.value.int_value = 42
    kv = rp.resource.attributes.add(key="host.name")
    kv.value.string_value = "h"
    sp = rp.scope_profiles.add()
    sp.scope.name = "profcap"
    p = sp.profiles.add()
    p.sample_type.type_strindex, p.sample_type.unit_strindex = 1, 2
    p.period_type.type_strindex, p.period_type.unit_strindex = 3, 4
    p.period = 10**7
    p.time_unix_nano = T0
    p.duration_nano = 10**9
    p.profile_id = bytes(range(1, 17))
    p.samples.add(stack_index=1, attribute_indices=[2], values=[5])
    return m


def prof(m):
    return m.resource_profiles[0].scope_profiles[0].profiles[0]


def rules(m):
    violations, _ = otlp_check.check_message(m)
    return {line.split(":")[1].strip() for line in violations}, violations


class CheckerTest(unittest.TestCase):
    def assertOnly(self, m, rule):
        got, lines = rules(m)
        self.assertEqual(got, {rule}, "\n".join(lines))

    def test_valid_passes(self):
        got, lines = rules(valid())
        self.assertEqual(lines, [])

    def test_summary(self):
        _, summary = otlp_check.check_message(valid())
        res = summary["resources"][0]
        self.assertEqual(res["attributes"], {"process.pid": 42, "host.name": "h"})
        self.assertEqual(res["samples"], 1)
        self.assertEqual(res["total"], 5)
        self.assertEqual(res["stacks"][0]["functions"], ["memcpy", "main"])
        self.assertEqual(res["stacks"][0]["types"], ["native", "native"])
        self.assertEqual(res["stacks"][0]["mappings"], ["/usr/lib/libc.so.6", "/usr/bin/app"])
        self.assertEqual(res["stacks"][0]["attributes"], {"thread.id": 42})
        self.assertEqual(res["profile"]["sample_type"], ["samples", "count"])

    # 1
    def test_zero_string(self):
        m = valid()
        m.dictionary.string_table[0] = "x"
        self.assertIn("zero-value", rules(m)[0])

    def test_zero_table_missing(self):
        m = valid()
        del m.dictionary.link_table[:]
        self.assertOnly(m, "zero-value")

    def test_zero_entry_not_default(self):
        m = valid()
        m.dictionary.function_table[0].start_line = 3
        self.assertOnly(m, "zero-value")

    def test_zero_link(self):
        m = valid()
        m.dictionary.link_table[0].span_id = b"\1" * 8
        self.assertOnly(m, "zero-value")

    def test_zero_link_full_width_zero_ids(self):
        # profcheck: link_table[0] must equal Link{}; 16 + 8 zero bytes do not.
        m = valid()
        m.dictionary.link_table[0].trace_id = bytes(16)
        m.dictionary.link_table[0].span_id = bytes(8)
        self.assertOnly(m, "zero-value")

    # 13
    def test_link_id_width(self):
        m = valid()
        m.dictionary.link_table.add(trace_id=b"\1" * 8, span_id=b"\2" * 8)
        prof(m).samples[0].link_index = 1
        self.assertOnly(m, "link-id-width")

    # 12
    def test_negative_line_column_start_line(self):
        m = valid()
        m.dictionary.location_table[1].lines[0].line = -1
        m.dictionary.location_table[1].lines[0].column = -2
        m.dictionary.function_table[1].start_line = -3
        got, lines = rules(m)
        self.assertEqual(got, {"non-negative"})
        self.assertEqual(len(lines), 3, lines)

    # 14
    def test_structure(self):
        m = valid()
        m.resource_profiles.add()
        m.resource_profiles.add().scope_profiles.add()
        got, lines = rules(m)
        self.assertEqual(got, {"structure"})
        self.assertEqual(len(lines), 2, lines)
        del m.resource_profiles[:]
        self.assertIn("structure", rules(m)[0])

    # 2
    def test_index_range_stack(self):
        m = valid()
        prof(m).samples.add(stack_index=9, values=[1])
        self.assertOnly(m, "index-range")

    def test_index_range_strindex(self):
        m = valid()
        prof(m).period_type.unit_strindex = 99
        self.assertIn("index-range", rules(m)[0])

    def test_index_range_location(self):
        m = valid()
        m.dictionary.stack_table[1].location_indices.append(-1)
        self.assertOnly(m, "index-range")

    def test_index_range_function(self):
        m = valid()
        m.dictionary.location_table[1].lines[0].function_index = 3
        self.assertIn("index-range", rules(m)[0])

    # 3
    def test_duplicate_sample_keys(self):
        m = valid()
        a = m.dictionary.attribute_table.add(key_strindex=9)
        a.value.int_value = 43
        prof(m).samples[0].attribute_indices.append(3)
        self.assertOnly(m, "attr-key-unique")

    # 4
    def test_two_values(self):
        m = valid()
        prof(m).samples[0].values.append(1)
        self.assertOnly(m, "sample-values")

    def test_values_timestamps_mismatch(self):
        m = valid()
        s = prof(m).samples[0]
        s.timestamps_unix_nano.extend([T0, T0 + 1])
        self.assertOnly(m, "sample-values")

    # 5
    def test_mixed_shapes(self):
        m = valid()
        d = m.dictionary
        d.stack_table.add(location_indices=[2])
        prof(m).samples.add(stack_index=2, timestamps_unix_nano=[T0 + 5])
        self.assertOnly(m, "sample-shape")

    # 6
    def test_mapping_range_both_zero_ok(self):
        # profcheck accepts a mapping whose range is unknown (both zero);
        # its locations are then not range-checked.
        m = valid()
        mp = m.dictionary.mapping_table[1]
        mp.memory_start = mp.memory_limit = 0
        self.assertEqual(rules(m)[1], [])

    def test_mapping_range(self):
        m = valid()
        mp = m.dictionary.mapping_table[1]
        mp.memory_limit = mp.memory_start
        # The location in it is now outside as well (rule 10).
        self.assertEqual(rules(m)[0], {"mapping-range", "location-address"})

    # 7
    def test_timestamp_range(self):
        m = valid()
        s = prof(m).samples[0]
        del s.values[:]
        s.timestamps_unix_nano.append(T0 + 10**9)
        self.assertOnly(m, "timestamp-range")

    # 8
    def test_duplicate_string(self):
        m = valid()
        d = m.dictionary
        d.string_table.append("memcpy")
        d.function_table.add(name_strindex=len(d.string_table) - 1)
        d.location_table.add(mapping_index=1, address=0x1300).lines.add(
            function_index=len(d.function_table) - 1)
        d.stack_table.add(location_indices=[len(d.location_table) - 1])
        prof(m).samples.add(stack_index=len(d.stack_table) - 1, values=[1])
        self.assertOnly(m, "duplicate")

    def test_duplicate_location(self):
        m = valid()
        d = m.dictionary
        d.location_table.append(d.location_table[1])
        d.stack_table.add(location_indices=[3])
        prof(m).samples.add(stack_index=2, values=[1])
        self.assertOnly(m, "duplicate")

    # 9
    def test_orphan_string(self):
        m = valid()
        m.dictionary.string_table.append("lonely")
        self.assertOnly(m, "orphan")

    def test_orphan_stack(self):
        m = valid()
        m.dictionary.stack_table.add(location_indices=[2])
        self.assertOnly(m, "orphan")

    def test_orphan_function_mapping_attr(self):
        m = valid()
        d = m.dictionary
        d.function_table.add(name_strindex=7, filename_strindex=10)
        d.mapping_table.add(memory_start=1, memory_limit=2, filename_strindex=10)
        d.attribute_table.add(key_strindex=8).value.string_value = "kernel"
        got, lines = rules(m)
        self.assertEqual(got, {"orphan"})
        self.assertEqual(len(lines), 3, lines)

    def test_duplicate_mapping_attribute_order(self):
        # Same filename, range, offset and attributes in another order.
        m = valid()
        d = m.dictionary
        d.attribute_table.add(key_strindex=9).value.int_value = 7
        d.mapping_table[1].attribute_indices.extend([1, 3])
        d.mapping_table.add(memory_start=0x1000, memory_limit=0x2000, filename_strindex=5,
                            attribute_indices=[3, 1])
        d.location_table.add(mapping_index=3, address=0x1300).lines.add(function_index=1)
        d.stack_table.add(location_indices=[3])
        prof(m).samples.add(stack_index=2, values=[1])
        self.assertOnly(m, "duplicate")

    def test_orphan_string_only_in_attribute_value(self):
        # profcheck counts no reference from an AnyValue's string_value_strindex.
        m = valid()
        d = m.dictionary
        d.string_table.append("only-a-value")
        d.attribute_table.add(key_strindex=8).value.string_value_strindex = \
            len(d.string_table) - 1
        d.location_table[2].attribute_indices.append(len(d.attribute_table) - 1)
        d.location_table[2].attribute_indices.remove(1)
        self.assertOnly(m, "orphan")

    def test_orphan_link(self):
        m = valid()
        m.dictionary.link_table.add(trace_id=b"\1" * 16, span_id=b"\2" * 8)
        self.assertOnly(m, "orphan")

    # 10
    def test_function_without_name(self):
        m = valid()
        m.dictionary.function_table[2].name_strindex = 0
        m.dictionary.string_table[7] = "main-unused"
        m.dictionary.function_table[2].filename_strindex = 0
        got, _ = rules(m)
        self.assertIn("function-name", got)

    def test_location_outside_mapping(self):
        m = valid()
        m.dictionary.location_table[1].address = 0x3000
        self.assertOnly(m, "location-address")

    # 11
    def test_profile_id_zero(self):
        m = valid()
        prof(m).profile_id = bytes(16)
        self.assertOnly(m, "profile-id")

    def test_profile_id_short(self):
        m = valid()
        prof(m).profile_id = b"\1" * 8
        self.assertOnly(m, "profile-id")

    def test_profile_id_shared(self):
        m = valid()
        rp = m.resource_profiles.add()
        rp.CopyFrom(m.resource_profiles[0])
        self.assertOnly(m, "profile-id")

    def test_duration_zero(self):
        m = valid()
        prof(m).duration_nano = 0
        self.assertOnly(m, "duration")

    def test_missing_pid(self):
        m = valid()
        del m.resource_profiles[0].resource.attributes[0]
        self.assertOnly(m, "process-pid")

    def test_string_pid(self):
        m = valid()
        m.resource_profiles[0].resource.attributes[0].value.string_value = "42"
        self.assertOnly(m, "process-pid")


class CliTest(unittest.TestCase):
    def run_cli(self, m, *args):
        with tempfile.NamedTemporaryFile(suffix=".pb") as f:
            f.write(m.SerializeToString() if m is not None else b"\xff\xff\xff")
            f.flush()
            return subprocess.run([sys.executable, otlp_check.__file__, f.name] + list(args),
                                  capture_output=True, text=True)

    def test_valid_both_schemas(self):
        r = self.run_cli(valid(), "--summary")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn('"memcpy"', r.stdout)

    def test_violation_exit_status(self):
        m = valid()
        prof(m).duration_nano = 0
        r = self.run_cli(m, "--schema", "ours")
        self.assertEqual(r.returncode, 1)
        self.assertIn("FAIL: duration:", r.stderr)

    def test_garbage(self):
        r = self.run_cli(None, "--schema", "ours")
        self.assertEqual(r.returncode, 1)
        self.assertIn("FAIL: decode:", r.stderr)


if __name__ == "__main__":
    unittest.main()
