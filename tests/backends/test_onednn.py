"""backends/onednn.py: the constants read from oneDNN's headers, the layouts to and from
its memory descriptors, and what happens when the library is missing.

Tests that need oneDNN skip, saying so, when it is not installed (the README's plain test
command installs only the test extra); with BENCHDNN_PY_REQUIRE_ONEDNN=1 (set by .ci/run,
which installs the onednn extra) a missing library fails them instead. The header parser
and the tags are tested everywhere.
"""

from __future__ import annotations

import re

import pytest
from conftest import run_cli

from benchdnn_py.backends import onednn
from benchdnn_py.common import layout


@pytest.fixture
def lib(onednn_lib):
    return onednn_lib


HEADER = """
#ifndef GUARD_H
#define GUARD_H
/// A status.
typedef enum {
    dnnl_success = 0, /* first */
    dnnl_out_of_memory = 1,
    dnnl_invalid_arguments, // counted on from the one before
#ifdef DNNL_EXPERIMENTAL_SPARSE
    dnnl_sparse_only,
#endif
    dnnl_unimplemented,
#if 0
    dnnl_never,
#endif
} dnnl_status_t;
typedef enum {
    dnnl_format_tag_undef = 0,
    dnnl_format_tag_any,
    dnnl_a,
    dnnl_ab,
    dnnl_format_tag_last,
    dnnl_x = dnnl_a,
    dnnl_nc = dnnl_ab,
} dnnl_format_tag_t;
#define DNNL_ARG_SRC_0 1
#define DNNL_ARG_SRC DNNL_ARG_SRC_0
#define DNNL_ARG_MASK 0x10u
#define DNNL_ARG_BOTH (DNNL_ARG_SRC | DNNL_ARG_MASK)
#define DNNL_ARG_SHIFTED (1 << 4)
#define DNNL_RUNTIME_DIM_VAL INT64_MIN
#endif
"""


def test_the_header_parser_counts_enumerators_follows_aliases_and_skips_disabled_blocks():
    c = onednn.parse_constants([HEADER])
    assert c["dnnl_success"] == 0 and c["dnnl_out_of_memory"] == 1
    assert c["dnnl_invalid_arguments"] == 2
    assert c["dnnl_unimplemented"] == 3            # the sparse entry is not counted
    assert "dnnl_sparse_only" not in c and "dnnl_never" not in c
    assert c["dnnl_format_tag_any"] == 1 and c["dnnl_ab"] == 3
    assert c["dnnl_x"] == c["dnnl_a"] == 2 and c["dnnl_nc"] == 3
    assert c["DNNL_ARG_SRC"] == 1 and c["DNNL_ARG_MASK"] == 16
    assert c["DNNL_ARG_BOTH"] == 17 and c["DNNL_ARG_SHIFTED"] == 16
    assert "DNNL_RUNTIME_DIM_VAL" not in c         # not an integer expression


def test_an_enumerator_that_cannot_be_evaluated_is_an_error_not_a_guess():
    with pytest.raises(ValueError, match="dnnl_b = dnnl_unknown"):
        onednn.parse_constants(["typedef enum { dnnl_a = 0, dnnl_b = dnnl_unknown } t;"])


@pytest.mark.parametrize("tag, dims, expected", [
    ("nchw", (2, 20, 5, 5), "abcd"), ("nhwc", (2, 20, 5, 5), "acdb"),
    ("nChw16c", (2, 20, 5, 5), "aBcd16b"), ("OIhw16i16o", (32, 20, 3, 3), "ABcd16b16a"),
    ("gOIhw16i16o", (2, 32, 20, 3, 3), "aBCde16c16b"), ("Goihw16g", (32, 1, 1, 3, 3),
                                                        "Abcde16a"),
])
def test_tag_of_names_a_layout_by_its_canonical_letters(tag, dims, expected):
    assert onednn.tag_of(layout.parse_tag(tag).layout(dims)) == expected


def test_tag_of_gives_none_for_strides_no_tag_describes():
    assert onednn.tag_of(layout.strided_layout((2, 3, 4, 5), (200, 1, 30, 6))) is None
    assert onednn.tag_of(layout.strided_layout((2, 3), (3, 1), offset0=4)) is None


# -- with the library ----------------------------------------------------------------------

def _enumerators(text: str, enum: str) -> list[str]:
    """The names an enum declares without `=` (aliases name another value)."""
    body = re.search(r"typedef enum \{((?:(?!typedef enum).)*?)\}\s*" + enum + ";", text,
                     re.S).group(1)
    body = re.sub(r"//[^\n]*|/\*.*?\*/|#[^\n]*", "", body, flags=re.S)
    return [item.strip() for item in body.split(",") if item.strip() and "=" not in item]


def test_every_format_tag_read_from_the_headers_is_the_librarys_own(lib):
    """oneDNN names each tag value (dnnl_fmt_tag2str): the values read from the headers
    must be those the loaded library uses, aliases excluded (they name another tag)."""
    text = (onednn.include_dir(lib.path) / "dnnl_types.h").read_text()
    names = [n for n in _enumerators(text, "dnnl_format_tag_t")
             if n not in ("dnnl_format_tag_undef", "dnnl_format_tag_any",
                          "dnnl_format_tag_last")]
    assert len(names) > 500
    wrong = [n for n in names
             if lib.ffi.string(lib.lib.dnnl_fmt_tag2str(lib.c.values[n])).decode() != n[5:]]
    assert not wrong, wrong[:5]


def test_data_type_values_are_the_librarys_own(lib):
    for dt in ("f32", "bf16", "f16", "s32", "s8", "u8"):
        assert lib.ffi.string(lib.lib.dnnl_dt2str(getattr(lib.c, f"dnnl_{dt}"))).decode() == dt


@pytest.mark.parametrize("lay", [
    layout.plain((2, 3, 4, 5)),
    layout.parse_tag("nhwc").layout((2, 3, 4, 5)),
    layout.parse_tag("nChw16c").layout((2, 20, 5, 5)),
    layout.parse_tag("nChw8c").layout((2, 20, 5, 5)),
    layout.parse_tag("OIhw16i16o").layout((32, 20, 3, 3)),
    layout.parse_tag("gOIhw16o16i").layout((2, 18, 20, 3, 3)),
    layout.strided_layout((2, 3, 4, 5), (200, 1, 30, 6)),
], ids=lambda lay: lay.describe())
def test_a_layout_survives_the_trip_through_a_memory_descriptor(lib, lay):
    md = lib.md_of(lay, "f32")
    back = lib.layout_of(md)
    assert back is not None and back.same_memory(lay)
    assert lib.md_size(md) == 4 * lay.size


def test_a_descriptor_with_extra_data_has_no_layout(lib):
    """int8 weights chosen by oneDNN carry a compensation buffer after the blocks: no
    Layout describes that memory, so the backend reorders into it instead."""
    res = run_cli("--conv", "--backend=onednn", "-v5", "--dt=u8:s8:u8",
                  "--attr-zero-points=src:common:2", "mb1ic16ih6oc16kh3ph1")
    assert res.code == 0, res.out
    line = next(l for l in res.lines if l.startswith("implementation: "))
    # the weights run plain on the harness's side: reordered into oneDNN's memory at bind
    assert "wei any=abcd" in line, line


def test_info_names_the_loaded_onednn(lib):
    res = run_cli("info")
    line = next(l for l in res.lines if l.strip().startswith("onednn "))
    assert f"{lib.version} (runtime {lib.runtime}, isa {lib.isa}" in line


def test_a_missing_library_makes_each_case_unimplemented_saying_how_to_get_it(tmp_path):
    missing = tmp_path / "libdnnl.so.3"
    res = run_cli("--conv", "--backend=onednn", "mb1ic16ih6oc16kh3ph1",
                  env={onednn.LIB_ENV: str(missing)})
    assert res.code == 1
    line = next(l for l in res.lines if l.startswith("0:"))
    assert line.startswith(f"0:UNIMPLEMENTED ({onednn.LIB_ENV}={missing}: no such file)"), line
    assert "no such file" in next(l for l in run_cli(
        "info", env={onednn.LIB_ENV: str(missing)}).lines if l.strip().startswith("onednn "))
