"""Property-based fuzzing of oneDNN Graph JSON cases (hypothesis): a shipped case with one
value replaced, one key removed, or cut short either loads, and then makes its
convolutions' problems, or is refused with one line (ProblemError: INVALID_ARGUMENTS);
never another exception."""

from __future__ import annotations

import copy
import json

from hypothesis import given
from hypothesis import strategies as st

from benchdnn_py.drivers import DRIVERS
from benchdnn_py.engine.settings import GlobalSettings
from benchdnn_py.errors import ProblemError

from conftest import ROOT, assert_one_line

CASES = sorted((ROOT / "problems/graph").glob("*.json"))
VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 2**40) | st.floats(allow_nan=True)
    | st.text(max_size=10) | st.sampled_from(["s64[]", "string", "f32", "bf16", "NCX",
                                              "NXC", "OIX", "XIO", "SAME_UPPER", "VALID"]),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner,
                                                                 max_size=3),
    max_leaves=8)


def _paths(node, prefix=()):
    """Every (path, value) in a JSON document, the document itself first."""
    yield prefix, node
    children = node.items() if isinstance(node, dict) else \
        enumerate(node) if isinstance(node, list) else ()
    for key, child in children:
        yield from _paths(child, (*prefix, key))


@st.composite
def damaged_case(draw) -> str:
    doc = json.loads(draw(st.sampled_from(CASES)).read_text())
    paths = [p for p, _ in _paths(doc) if p]
    how = draw(st.sampled_from(["replace", "remove", "cut"]))
    if how == "cut":
        text = json.dumps(doc)
        return text[:draw(st.integers(0, len(text)))]
    doc = copy.deepcopy(doc)
    path = draw(st.sampled_from(paths))
    parent = doc
    for key in path[:-1]:
        parent = parent[key]
    if how == "remove":
        del parent[path[-1]]
    else:
        parent[path[-1]] = draw(VALUES)
    return json.dumps(doc)


@given(damaged_case())
def test_a_damaged_graph_case_loads_or_is_one_problem_error(tmp_path_factory, text):
    path = tmp_path_factory.mktemp("graph") / "case.json"
    path.write_text(text)
    graph = DRIVERS["graph"]
    values = {o.slot: o.default for o in graph.options}
    try:
        prb = graph.make_problem(values, str(path), GlobalSettings())
    except ProblemError as exc:   # the driver may also refuse it while making the problem
        assert_one_line(exc)
        return
    # A file that does not load is carried on the problem, reported when it runs.
    assert prb.case is not None or (prb.error and "\n" not in prb.error), prb.error
